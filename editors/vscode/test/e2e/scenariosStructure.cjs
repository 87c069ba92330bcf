// @ts-check
// What the server knows about code, as a person meets it in VS Code: a definition added by its
// name follows the name when code moves and says `missing` when it is deleted; a file shown as its
// outline and whole again; a map of the folder; the model named in the status bar after a change
// from the command line, and chosen from the server's list.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { STEP_MS, sleep, runCommand, openFile, statusItem, statusText, viewRows, openContextView, contextMenuEntries } = require('./workbench.cjs');
const { WS, cli, expectedStatus, serverWindow, until, assertEqual } = require('./fixture.cjs');

/** @typedef {import('playwright-core').Page} Page */

const SHAPES = 'shapes.py';
const REEXPORT = 'reexport.py';
const SHAPES_LINES = [
  'import math',
  '',
  '',
  'class Square:',
  '    """A square of a side."""',
  '',
  '    def area(self):',
  '        return self.side ** 2',
  '',
  '    def scale(self, k):',
  '        self.side *= k',
  '',
  '',
  'def total(shapes):',
  '    return math.fsum(s.area() for s in shapes)',
  '',
];
fs.writeFileSync(path.join(WS, SHAPES), SHAPES_LINES.join('\n'));

/** The server's item that holds `Square.area`, when `ok` holds for it. */
async function areaItem(/** @type {(item: any) => boolean} */ ok, /** @type {string} */ what) {
  const items = await serverWindow((it) => it.some((i) => i.metadata.symbol === 'Square.area' && ok(i)), what);
  return items.find((i) => i.metadata.symbol === 'Square.area');
}

/** Puts the cursor on `line` (1-based) of the active editor. */
async function gotoLine(/** @type {Page} */ page, /** @type {number} */ line) {
  await page.keyboard.press('Control+g');
  await page.keyboard.type(String(line));
  await page.keyboard.press('Enter');
}

/** The entries of a row's context menu in the items view, then the menu closed. */
async function rowMenu(/** @type {Page} */ page, /** @type {string} */ label) {
  const row = viewRows(page).filter({ hasText: label }).first();
  await row.click({ button: 'right' });
  await page.locator('.context-view .action-item').first().waitFor({ timeout: STEP_MS });
  return contextMenuEntries(page);
}

/**
 * @param {{ shot: (page: Page, name: string) => Promise<unknown> }} env
 * @returns {{name: string, run: (page: Page) => Promise<void>}[]}
 */
function structureScenarios({ shot }) {
  return [
    {
      name: '19-definition-by-name-follows-its-name',
      async run(page) {
        await openFile(page, SHAPES);
        await gotoLine(page, 8); // `return self.side ** 2`
        await runCommand(page, 'contextls: Add Symbol at Cursor');
        const added = await areaItem((i) => i.metadata.startLine === 7, 'after Add Symbol at Cursor');
        assertEqual([added.metadata.endLine, added.metadata.symbolKind, added.stale], [8, 'method', false], 'the method, by its name');
        await page.locator('.statusbar-item', { hasText: `added ${SHAPES}:7-8 (Square.area)` }).first().waitFor({ timeout: STEP_MS });
        await openContextView(page);
        await viewRows(page).filter({ hasText: `${SHAPES}:7-8 (Square.area)` }).filter({ hasText: 'definition' }).first().waitFor({ timeout: STEP_MS });
        await shot(page, '19a-definition-added');
        // Two lines typed above the class: the item moves with its name, not stale.
        await gotoLine(page, 1);
        await page.keyboard.press('Home');
        await page.keyboard.type('# eins\n# zwei\n');
        const moved = await areaItem((i) => i.metadata.startLine === 9, 'after two lines above it');
        assertEqual([moved.metadata.endLine, moved.stale], [10, false], 'the definition after the lines above it');
        await shot(page, '19b-definition-moved');
        // The method deleted: stale, because its definition is missing; its text stays.
        await gotoLine(page, 9);
        for (let i = 0; i < 3; i++) await page.keyboard.press('Control+Shift+k');
        const gone = await areaItem((i) => i.stale && i.metadata.staleReason === 'missing', 'after deleting the method');
        if (!gone.content.includes('return self.side ** 2')) throw new Error(`the text it had: ${JSON.stringify(gone.content)}`);
        await shot(page, '19c-definition-missing');
        // The file as it was, on disk and in the editor, for what comes next.
        fs.writeFileSync(path.join(WS, SHAPES), SHAPES_LINES.join('\n'));
        await runCommand(page, 'File: Revert File');
        await page.locator('.tab.active.dirty').waitFor({ state: 'detached', timeout: STEP_MS });
        await areaItem((i) => i.metadata.startLine === 7, 'after the file is as it was');
        cli('rm', gone.id);
      },
    },
    {
      name: '20-outline-whole-and-a-map',
      async run(page) {
        await openFile(page, SHAPES);
        await gotoLine(page, 15); // in `total`, not in a class: the file
        await runCommand(page, 'contextls: Add as Outline');
        const items = await serverWindow((it) => it.some((i) => i.kind === 'file' && i.metadata.path === SHAPES && i.view === 'outline'), 'after Add as Outline');
        const outlined = items.find((i) => i.kind === 'file' && i.metadata.path === SHAPES);
        if (outlined.content.includes('self.side *= k') || !outlined.content.includes('def scale(self, k):')) {
          throw new Error(`the outline: ${JSON.stringify(outlined.content)}`);
        }
        await openContextView(page);
        await viewRows(page).filter({ hasText: SHAPES }).filter({ hasText: 'outline' }).first().waitFor({ timeout: STEP_MS });
        const entries = await rowMenu(page, SHAPES);
        if (!entries.includes('Show Whole') || entries.includes('Show as Outline')) throw new Error(`the row menu of an outline: ${JSON.stringify(entries)}`);
        await shot(page, '20a-outline-row-menu');
        const whole = page.locator('.context-view .action-item', { hasText: /^Show Whole$/ }).first();
        await whole.hover();
        await page.keyboard.press('Enter');
        const shown = await serverWindow((it) => it.some((i) => i.id === outlined.id && i.view === 'whole'), 'after Show Whole');
        if (!shown.find((i) => i.id === outlined.id).content.includes('self.side *= k')) throw new Error('Show Whole did not bring the bodies back');
        const entriesWhole = await rowMenu(page, SHAPES);
        if (!entriesWhole.includes('Show as Outline')) throw new Error(`the row menu of a whole file: ${JSON.stringify(entriesWhole)}`);
        await page.keyboard.press('Escape');
        // Two rows chosen together, one a file with nothing to hide: it stays whole, and the note says so.
        fs.writeFileSync(path.join(WS, REEXPORT), 'from shapes import Square, total\n');
        const [reexport] = cli('add', REEXPORT).items;
        await viewRows(page).filter({ hasText: REEXPORT }).first().click();
        await viewRows(page).filter({ hasText: SHAPES }).first().click({ modifiers: ['Control'] });
        await runCommand(page, 'contextls: Show as Outline');
        await page.locator('.statusbar-item', { hasText: `${REEXPORT} left whole (nothing to hide)` }).first().waitFor({ timeout: STEP_MS });
        const both = await serverWindow((it) => it.some((i) => i.id === outlined.id && i.view === 'outline'), 'after Show as Outline of two rows');
        assertEqual(both.find((i) => i.id === reexport.id).view, 'whole', 'the file with nothing to hide');
        await shot(page, '20c-outline-of-two-rows');
        cli('rm', reexport.id);
        // The map, ranked for words asked.
        await runCommand(page, 'contextls: Add Map of the Folder');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor({ state: 'visible', timeout: STEP_MS });
        await input.fill('wrap text');
        await page.keyboard.press('Enter');
        const withMap = await serverWindow((it) => it.some((i) => i.view === 'map'), 'after Add Map of the Folder');
        const map = withMap.find((i) => i.view === 'map');
        if (!/def \w+/.test(map.content)) throw new Error(`the map: ${JSON.stringify(map.content.slice(0, 400))}`);
        await viewRows(page).filter({ hasText: 'map' }).first().waitFor({ timeout: STEP_MS });
        await shot(page, '20b-map-in-the-view');
        cli('rm', map.id, outlined.id);
      },
    },
    {
      name: '21-the-model-named-and-chosen',
      async run(page) {
        // From the command line, another process: the status bar names the model within a second or so.
        cli('config', 'set', 'model', 'claude-opus-4.7');
        const claude = cli('status');
        assertEqual([claude.model, claude.countExact], ['claude-opus-4.7', true], 'the window after config set model');
        await statusText(page, (t) => t === expectedStatus(cli('status')) && t.includes(' claude-opus-4.7 tokens '), 'after config set model');
        await statusItem(page).hover();
        const tooltip = page.locator('.monaco-hover', { hasText: 'Tokens of claude-opus-4.7: exact' }).first();
        await tooltip.waitFor({ timeout: STEP_MS });
        await shot(page, '21a-model-in-the-tooltip');
        await page.mouse.move(700, 400);
        // Chosen from the server's list, which says which counts are estimates.
        await runCommand(page, 'contextls: Choose the Model');
        const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'gemini-2.5' }).first();
        await row.waitFor({ timeout: STEP_MS });
        const said = ((await row.textContent()) ?? '').replace(/\s+/g, ' ');
        if (!said.includes('estimate')) throw new Error(`the picker's gemini-2.5: ${said}`);
        await shot(page, '21b-model-picker');
        await page.locator('.quick-input-widget input').fill('gemini-2.5');
        await sleep(300);
        await page.keyboard.press('Enter');
        await until(() => cli('status').model, (m) => m === 'gemini-2.5', 'the window after choosing gemini-2.5');
        await statusText(page, (t) => t === expectedStatus(cli('status')) && t.startsWith('~'), 'after choosing gemini-2.5');
        await shot(page, '21c-estimate-in-the-status');
        // Back to the default, as Reset Setting does: the folder setting goes.
        const settingsFile = path.join(WS, '.vscode', 'settings.json');
        const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
        delete settings['contextls.model'];
        fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2) + '\n');
        await until(() => cli('status').model, (m) => m === 'gpt-4o', 'the window after the folder setting went');
      },
    },
  ];
}

module.exports = { structureScenarios };
