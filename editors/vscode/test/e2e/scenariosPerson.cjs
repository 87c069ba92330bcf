// @ts-check
// What a person meets at the edges: activation on first use, Show Context as one read-only live
// document (also after a reload), the row menu and the Delete key, the archive search view, Add
// Symbol without a language extension, an unsaved buffer, folder adds within and over the budget
// (sliding, asked, refused), a .env chosen in the Explorer, a reset in the Settings UI, the
// language-model tools as Copilot's chat calls them, and a first run without contextls on PATH.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const {
  STEP_MS, sleep, runCommand, openFile, statusItem, statusText, viewRows, paneRows, openContextView, dialogFocus,
  contextMenuEntries, toastWith,
} = require('./workbench.cjs');
const {
  CONTEXTLS, WS, UNI_NAME, BIG_NAME, MULTI_NAME, SUB, PY_NAME, LIB, LIB2, HUGE, ENV_NAME, LOCAL_BIN,
  writeFolderSettings, cli, searchArchive, tokensOf, expectedStatus, serverWindow, until, assertEqual,
} = require('./fixture.cjs');
const { settingsScenarios } = require('./scenariosSettings.cjs');
const { structureScenarios } = require('./scenariosStructure.cjs');

/** @typedef {import('playwright-core').Page} Page */
/** @typedef {{name: string, run: (page: Page) => Promise<void>}} Scenario */

const EDITOR_TEXT = '.editor-instance .monaco-editor .view-lines';

/** The lines the active editor draws, top to bottom (spaces drawn as U+00A0 are spaces again). */
async function editorText(/** @type {Page} */ page) {
  const lines = await page.locator(EDITOR_TEXT).first().evaluate((view) =>
    [...view.querySelectorAll('.view-line')]
      .map((line) => ({ top: parseFloat(/** @type {HTMLElement} */ (line).style.top) || 0, text: line.textContent ?? '' }))
      .sort((a, b) => a.top - b.top)
      .map((line) => line.text),
  );
  return lines.join('\n').replace(/\u00a0/g, ' ');
}

/** Chooses an entry of the Explorer's context menu on `name`. */
async function explorerMenu(/** @type {Page} */ page, /** @type {string} */ name, /** @type {string} */ entry) {
  await page.keyboard.press('Control+Shift+E');
  const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: new RegExp(`^${name}$`) }).first();
  await row.waitFor({ timeout: STEP_MS });
  await row.click({ button: 'right' });
  const item = page.locator('.context-view .action-item', { hasText: new RegExp(`^${entry}$`) }).first();
  await item.waitFor({ timeout: STEP_MS });
  const entries = await contextMenuEntries(page);
  // (a click while the menu still settles only highlights the entry: choose it by keyboard)
  await item.hover();
  await page.keyboard.press('Enter');
  return entries;
}

const ARCHIVE_REASONS = /** @type {Record<string, string>} */ ({
  maxItems: 'evicted at the item limit',
  maxTokens: 'evicted at the token budget',
  budget: 'evicted when the adaptive budget shrank',
  removed: 'removed by hand',
  cleared: 'cleared with the window',
});

/**
 * @param {{ artifacts: string, codeServer: import('./codeServer.cjs').CodeServer, probeIn: string, probeOut: string }} env
 * @returns {Record<string, Scenario>}
 */
function personScenarios({ artifacts, codeServer, probeIn, probeOut }) {
  const shot = (/** @type {Page} */ page, /** @type {string} */ name) => page.screenshot({ path: path.join(artifacts, `${name}.png`) });
  /** @type {Scenario[]} */
  const list = [
    {
      name: '0-activates-on-first-use',
      async run(page) {
        // Opening a folder starts nothing: no status item, no server.
        await sleep(2000);
        assertEqual(await statusItem(page).count(), 0, 'status items before contextls is used');
        assertEqual(codeServer.processes(/contextls\S* (serve|connect)/).length, 0, 'contextls servers before contextls is used');
        await shot(page, '0a-before-first-use');
        // Opening its view does: the server starts and the empty window says what to do.
        await openContextView(page);
        await statusText(page, (t) => t === '0/8k gpt-4o tokens · 0/50 items', 'after opening the view');
        await page.locator('.pane-body', { hasText: 'The context window of this folder is empty' }).first().waitFor({ timeout: STEP_MS });
        await page.locator('.pane-body .monaco-button', { hasText: 'Add Current File' }).first().waitFor({ timeout: STEP_MS });
        assertEqual(codeServer.processes(/contextls\S* serve/).length, 1, 'servers after the view opened');
      },
    },
    {
      name: '4-show-context-one-read-only-live-document',
      async run(page) {
        await runCommand(page, 'contextls: Show Context');
        await page.locator('.tab.active', { hasText: 'Context.md' }).waitFor({ timeout: STEP_MS });
        await until(() => editorText(page), (t) => /^## Context/.test(t), 'the rendered context');
        const language = await page.locator('.statusbar-item[id="status.editor.mode"]').textContent();
        assertEqual((language ?? '').trim(), 'Markdown', 'language of the context document');
        // Again: the same tab, not a second document.
        await runCommand(page, 'contextls: Show Context');
        await sleep(500);
        assertEqual((await page.locator('.tab').allTextContents()).filter((t) => t.includes('Context.md')).length, 1, 'Context.md tabs');
        assertEqual((await page.locator('.tab').allTextContents()).filter((t) => t.includes('Untitled')).length, 0, 'Untitled tabs');
        // Read-only: typing is refused, and nothing becomes dirty.
        await page.locator(EDITOR_TEXT).first().click();
        await page.keyboard.type('x');
        await page.locator('.monaco-editor-overlaymessage', { hasText: 'Cannot edit in read-only editor' }).waitFor({ timeout: STEP_MS });
        assertEqual(await page.locator('.tab.dirty').count(), 0, 'dirty tabs');
        // Live: a change from elsewhere shows without asking.
        cli('add-text', '--kind', 'custom', 'eine Notiz von der Kommandozeile');
        // (the editor draws only the lines in view: the note is the last item, at the end)
        const end = async () => {
          await page.keyboard.press('Control+End');
          return editorText(page);
        };
        await until(end, (t) => t.includes('eine Notiz von der Kommandozeile'), 'the context after the CLI added a note');
        await shot(page, '4a-show-context');
      },
    },
    {
      name: '7b-row-menu-copy-and-delete-key',
      async run(page) {
        const target = cli('ls').items.find((/** @type {any} */ i) => i.kind === 'code' && i.metadata.path === MULTI_NAME && i.content === 'drei');
        const archivedBefore = cli('status').archivedCount;
        await openContextView(page);
        const row = () => viewRows(page).filter({ hasText: target.label }).first();
        await row().click({ button: 'right' });
        await page.locator('.context-view .action-item').first().waitFor({ timeout: STEP_MS });
        const entries = await contextMenuEntries(page);
        await shot(page, '7b-row-menu');
        assertEqual(
          entries,
          ['Pin Item', 'Remove Item', 'Read Again from File', 'Copy Item Text', '---', 'Forget Item for Good'],
          'the row menu',
        );
        const copy = page.locator('.context-view .action-item', { hasText: /^Copy Item Text$/ }).first();
        await copy.hover();
        await page.keyboard.press('Enter');
        const copied = await until(() => page.evaluate(() => navigator.clipboard.readText()).catch(() => ''), (t) => t === target.content, 'the clipboard after Copy Item Text');
        assertEqual(copied, target.content, 'copied text');
        // A click selects the row (and shows its lines) with the keyboard still in the view: Delete removes it.
        await row().click();
        await page.keyboard.press('Delete');
        await serverWindow((it) => !it.some((i) => i.id === target.id), 'after Delete on the row');
        assertEqual(cli('status').archivedCount, archivedBefore + 1, 'archived items after Delete');
        // A row reached with the keyboard alone (focused, not selected): Delete removes it too.
        await runCommand(page, 'contextls: Focus on Context Window View');
        await page.keyboard.press('Home');
        const focused = page.locator('.pane:has(.pane-header:has-text("Context Window")) .monaco-list-row.focused').first();
        await focused.waitFor({ timeout: STEP_MS });
        const label = ((await focused.locator('.label-name').textContent()) ?? '').trim();
        if ((await focused.getAttribute('class'))?.includes('selected')) throw new Error('the focused row is selected: not the case this tests');
        await page.keyboard.press('Delete');
        await serverWindow((it) => !it.some((i) => i.label === label), `after Delete on the focused row ${label}`);
        assertEqual(await page.locator('.quick-input-widget').isVisible(), false, 'a picker after Delete');
      },
    },
    {
      name: '8-archive-search-view',
      async run(page) {
        const query = 'ünïcode';
        const [first] = searchArchive(query);
        if (!first) throw new Error(`nothing archived matches ${query}`);
        await runCommand(page, 'contextls: Search Archive');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor({ state: 'visible', timeout: STEP_MS });
        const placeholder = (await input.getAttribute('placeholder')) ?? '';
        if (!/^(Words|Describe)/.test(placeholder)) throw new Error(`search placeholder: ${placeholder}`);
        await input.fill(query);
        await page.keyboard.press('Enter');
        const rows = paneRows(page, 'Archive Search');
        const hitRow = rows.filter({ hasText: first.item.label }).first();
        await hitRow.waitFor({ timeout: STEP_MS });
        // The reason in words, and the snippet as plain text with the server's highlights.
        const description = (await hitRow.locator('.label-description').textContent()) ?? '';
        if (!description.startsWith(ARCHIVE_REASONS[first.reason] ?? first.reason)) throw new Error(`the hit's reason: ${description}`);
        const snippetRow = rows.nth(1);
        const drawn = await snippetRow.locator('.highlight').allTextContents();
        const points = Array.from(first.snippet);
        const expected = first.highlights.map((/** @type {number[]} */ [s, e]) => points.slice(s, e).join('').replace(/\s+/g, ' '));
        assertEqual(drawn, expected, 'highlighted parts of the snippet');
        await shot(page, '8a-archive-search');
        // Restore from the row: the item is back, and its hit leaves the view.
        await hitRow.hover();
        await hitRow.locator('.action-label[aria-label="Restore"]').click();
        await serverWindow((it) => it.some((i) => i.id === first.item.id), 'after Restore in Archive Search');
        await hitRow.waitFor({ state: 'detached', timeout: STEP_MS });
      },
    },
    {
      name: '9b-add-symbol-without-a-symbol-provider',
      async run(page) {
        // Stock VS Code has no Python symbol provider: the server parses it, and names the method.
        await openFile(page, PY_NAME);
        await page.keyboard.press('Control+Home');
        for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowDown'); // `words = text.split()`
        await runCommand(page, 'contextls: Add Symbol at Cursor');
        const items = await serverWindow((it) => it.some((i) => i.metadata.symbol === 'Wrapper.wrap'), 'after Add Symbol in Python');
        const symbol = items.find((i) => i.metadata.symbol === 'Wrapper.wrap');
        assertEqual([symbol.metadata.symbolKind, symbol.metadata.startLine, symbol.metadata.endLine], ['method', 4, 7], 'the method around the cursor');
      },
    },
    {
      name: '9d-a-merged-add-says-merged',
      async run(page) {
        // `def fill(text):` alone, then with its body: the second add absorbs the first.
        await openFile(page, PY_NAME);
        await page.keyboard.press('Control+g');
        await page.keyboard.type('10');
        await page.keyboard.press('Enter');
        await runCommand(page, 'contextls: Add Selection');
        const first = (await serverWindow((it) => it.some((i) => i.label === `${PY_NAME}:10`), 'after adding line 10')).find((i) => i.label === `${PY_NAME}:10`);
        await page.keyboard.press('Home');
        await page.keyboard.press('Shift+ArrowDown');
        await page.keyboard.press('Shift+End');
        await runCommand(page, 'contextls: Add Selection');
        await serverWindow((it) => it.some((i) => i.label === `${PY_NAME}:10-11`) && !it.some((i) => i.id === first.id), 'after adding lines 10-11');
        await page.locator('.statusbar-item', { hasText: `added ${PY_NAME}:10-11; merged ${first.id} into it` }).first().waitFor({ timeout: STEP_MS });
      },
    },
    {
      name: '9c-unsaved-buffer',
      async run(page) {
        await runCommand(page, 'File: New Untitled Text File');
        await page.locator('.tab.active', { hasText: 'Untitled' }).waitFor({ timeout: STEP_MS });
        await page.keyboard.type('notes from a buffer never saved\nsecond line');
        await page.keyboard.press('Control+A');
        await runCommand(page, 'contextls: Add Selection');
        const items = await serverWindow((it) => it.some((i) => i.metadata.source === 'unsaved buffer'), 'after adding an unsaved buffer');
        const item = items.find((i) => i.metadata.source === 'unsaved buffer');
        assertEqual([item.kind, item.content], ['code', 'notes from a buffer never saved\nsecond line'], 'the unsaved buffer\'s item');
        if (!/^Untitled-\d+:1-2$/.test(item.label)) throw new Error(`label: ${item.label}`);
        await page.locator('.statusbar-item', { hasText: 'is not saved to a file' }).first().waitFor({ timeout: STEP_MS });
        await runCommand(page, 'View: Revert and Close Editor');
      },
    },
    {
      name: '14-explorer-folder-within-the-budget',
      async run(page) {
        const entries = await explorerMenu(page, SUB, 'contextls: Add File');
        for (const want of ['contextls: Add File', 'contextls: Add File (Pinned)']) {
          if (!entries.includes(want)) throw new Error(`the Explorer's menu lacks ${want}: ${JSON.stringify(entries)}`);
        }
        const items = await serverWindow((it) => it.filter((i) => i.metadata.path?.startsWith(`${SUB}/`)).length === 2, 'after adding the folder');
        const mine = items.filter((i) => i.metadata.path?.startsWith(`${SUB}/`));
        assertEqual(mine.map((i) => i.metadata.path).sort(), [`${SUB}/a.txt`, `${SUB}/b.py`], 'files of the folder (not the binary one)');
        // What the folder left out, by name.
        await page.locator('.statusbar-item', { hasText: `left out ${SUB}/c.bin (binary)` }).first().waitFor({ timeout: STEP_MS });
      },
    },
    {
      name: '14b-folder-over-the-budget',
      async run(page) {
        cli('clear');
        cli('add', `${WS}/${UNI_NAME}:1-2`);
        cli('add', `${WS}/${BIG_NAME}:1-5`);
        const held = cli('ls').items;
        const lib = tokensOf(path.join(WS, LIB));
        const lib2 = tokensOf(path.join(WS, LIB2));
        // Room for the folder only if the oldest item goes (all of it as rendered; in chronological
        // order, as the stable order evicts in batches).
        const budget = cli('status').tokens + lib - 1;
        writeFolderSettings({ 'contextls.maxTokens': budget, 'contextls.renderOrder': 'chronological' });
        await until(() => cli('status').maxTokens, (m) => m === budget, 'the window\'s budget');
        await runCommand(page, 'Notifications: Clear All Notifications');
        // One item of two, a fifth of the tokens: not more than half of the window, so the folder
        // slides in like any add, and the eviction is announced with a way back.
        await explorerMenu(page, LIB, 'contextls: Add File');
        let after = await serverWindow((it) => it.filter((i) => i.metadata.path?.startsWith(`${LIB}/`)).length === 3, 'after adding lib/');
        assertEqual(after.some((i) => i.id === held[0].id), false, 'the oldest item left');
        assertEqual(await page.locator('.monaco-dialog-box').count(), 0, 'dialogs for a folder that evicts one item of two');
        const slid = await toastWith(page, `contextls evicted 1 item to stay within the token budget: ${held[0].label}`);
        await slid.locator('.monaco-button', { hasText: 'Restore It' }).waitFor({ timeout: STEP_MS });
        await shot(page, '14b-folder-slides');
        await runCommand(page, 'Notifications: Clear All Notifications');
        // lib2/ takes as much again: everything the window holds would go, so it asks, in the
        // command line's words, with one button that keeps the window (Escape too).
        const window = cli('ls').items;
        const windowTokens = window.reduce((/** @type {number} */ sum, /** @type {any} */ i) => sum + i.tokens, 0);
        await explorerMenu(page, LIB2, 'contextls: Add File');
        let { dialog } = await dialogFocus(page);
        const asked = (await dialog.innerText()).replace(/\s+/g, ' ');
        const question =
          `Adding ${LIB2}/ (3 files, ${lib2.toLocaleString('en-US')} tokens) would evict ${window.length} of the window's ` +
          `${window.length} items (${windowTokens.toLocaleString('en-US')} tokens), more than half of it.`;
        if (!asked.includes(question) || !asked.includes(window[0].label)) throw new Error(`the question: ${asked}`);
        assertEqual((await dialog.locator('.monaco-button').allTextContents()).map((b) => b.trim()).sort(), [`Add and Evict ${window.length}`, 'Keep the Window'], 'the question\'s buttons');
        await shot(page, '14b-folder-question');
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'detached', timeout: STEP_MS });
        assertEqual(cli('ls').items.map((/** @type {any} */ i) => i.id), window.map((/** @type {any} */ i) => i.id), 'the window after Keep');
        // Asked again, and agreed: the folder is in, and no toast repeats what was agreed to.
        await explorerMenu(page, LIB2, 'contextls: Add File');
        ({ dialog } = await dialogFocus(page));
        await dialog.locator('.monaco-button', { hasText: `Add and Evict ${window.length}` }).click();
        after = await serverWindow((it) => it.filter((i) => i.metadata.path?.startsWith(`${LIB2}/`)).length === 3, 'after Add and Evict');
        await sleep(1500);
        assertEqual(await page.locator('.notifications-toasts .notification-toast', { hasText: 'contextls evicted' }).count(), 0, 'eviction toasts after consent');
        // A folder that can never fit is refused with the figures, names what it left out, and changes nothing.
        const before = cli('ls').items.map((/** @type {any} */ i) => i.id);
        await explorerMenu(page, HUGE, 'contextls: Add File');
        const toast = await toastWith(page, 'does not fit');
        const said = (await toast.innerText()).replace(/\s+/g, ' ');
        if (!new RegExp(`${HUGE}/ does not fit: it needs [\\d,]+ tokens in 6 files`).test(said)) throw new Error(`the refusal: ${said}`);
        if (!said.includes(`Left out besides: ${HUGE}/blob.bin, binary`)) throw new Error(`the refusal does not name what it left out: ${said}`);
        await shot(page, '14c-folder-too-big');
        assertEqual(cli('ls').items.map((/** @type {any} */ i) => i.id), before, 'the window after the refusal');
        await runCommand(page, 'Notifications: Clear All Notifications');
      },
    },
    {
      name: '14c-env-from-the-explorer-asks',
      async run(page) {
        // A file that usually holds credentials, chosen by name: asked first.
        await explorerMenu(page, ENV_NAME, 'contextls: Add File');
        let { dialog } = await dialogFocus(page);
        const asked = (await dialog.innerText()).replace(/\s+/g, ' ');
        if (!asked.includes(`${ENV_NAME} usually holds credentials`)) throw new Error(`the question: ${asked}`);
        assertEqual((await dialog.locator('.monaco-button').allTextContents()).map((b) => b.trim()).sort(), [`Add ${ENV_NAME}`, "Don't Add"], 'its buttons');
        await shot(page, '14c-env-question');
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'detached', timeout: STEP_MS });
        assertEqual(cli('ls').items.some((/** @type {any} */ i) => i.metadata.path === ENV_NAME), false, '.env in the window after Don\'t Add');
        await explorerMenu(page, ENV_NAME, 'contextls: Add File');
        ({ dialog } = await dialogFocus(page));
        await dialog.locator('.monaco-button', { hasText: `Add ${ENV_NAME}` }).click();
        const env = (await serverWindow((it) => it.some((i) => i.metadata.path === ENV_NAME), 'after Add .env')).find((i) => i.metadata.path === ENV_NAME);
        // What it seems to hold: one notification naming every kind, offering this extension's Forget.
        const warning = await toastWith(page, `${ENV_NAME} seems to contain`);
        await sleep(1000);
        const secretToasts = await page.locator('.notifications-toasts .notification-toast', { hasText: 'seems to contain' }).allInnerTexts();
        assertEqual(secretToasts.length, 1, 'notifications about the secrets of .env');
        if (/contextls forget/.test(secretToasts[0] ?? '') || !/ and /.test(secretToasts[0] ?? '')) throw new Error(`the secret warning: ${secretToasts[0]}`);
        await shot(page, '14c-env-secret-warning');
        await warning.locator('.monaco-button', { hasText: 'Forget for Good…' }).click();
        ({ dialog } = await dialogFocus(page));
        await dialog.locator('.monaco-button', { hasText: /^Forget for Good$/ }).click();
        await serverWindow((it) => !it.some((i) => i.id === env.id), 'after Forget for Good');
        assertEqual(searchArchive('AKIAIOSFODNN7EXAMPLE').length, 0, 'the archive after Forget for Good');
        await page.locator('.statusbar-item', { hasText: 'forgot 1 item for good' }).first().waitFor({ timeout: STEP_MS });
      },
    },
    {
      name: '14d-reset-in-the-settings-ui',
      async run(page) {
        writeFolderSettings({});
        await until(() => cli('status').maxTokens, (m) => m === 8000, 'the window after the folder setting went');
        await runCommand(page, 'Preferences: Open Settings (UI)');
        await page.locator('.settings-editor').waitFor({ timeout: STEP_MS });
        await sleep(500);
        await page.keyboard.type('contextls.maxTokens');
        const row = page.locator('.settings-editor .setting-item-contents[data-key="contextls.maxTokens"]');
        const input = row.locator('input.setting-control-focus-target');
        await input.waitFor({ timeout: STEP_MS });
        await input.fill('4000');
        await statusText(page, (t) => / · \d+\/50 items$/.test(t) && t.includes('/4k gpt-4o tokens'), 'after setting 4000 in the Settings UI');
        assertEqual(cli('config').effective.maxTokens, 4000, 'contextls config after setting 4000');
        await row.hover();
        await row.locator('.setting-toolbar-container .action-label').first().click();
        const reset = page.locator('.context-view .action-item', { hasText: /^Reset Setting$/ }).first();
        await reset.waitFor({ timeout: STEP_MS });
        await reset.hover();
        await page.keyboard.press('Enter');
        // The Settings UI shows the default, and so do the status bar and the command line.
        await until(() => input.inputValue(), (v) => v === '8000', 'the Settings UI after Reset Setting');
        await statusText(page, (t) => t.includes('/8k gpt-4o tokens'), 'after Reset Setting');
        assertEqual(cli('config').effective.maxTokens, 8000, 'contextls config after Reset Setting');
        await shot(page, '14d-after-reset');
        await runCommand(page, 'View: Close Editor');
      },
    },
    {
      name: '14e-set-task-and-window-settings',
      async run(page) {
        await runCommand(page, 'contextls: Set Task');
        const choice = page.locator('.quick-input-list .monaco-list-row', { hasText: /^debugging/ }).first();
        await choice.waitFor({ timeout: STEP_MS });
        await choice.click();
        // A folder setting, sent to the folder's window: the command line sees it.
        await until(() => cli('config').effective.task, (t) => t === 'debugging', 'the window\'s task');
        await runCommand(page, 'contextls: Window Settings');
        const task = page.locator('.quick-input-list .monaco-list-row', { hasText: /^task/ }).first();
        await task.waitFor({ timeout: STEP_MS });
        const row = ((await task.innerText()) ?? '').replace(/\s+/g, ' ');
        if (!/^task ?debugging/.test(row)) throw new Error(`Window Settings' task row: ${row}`);
        await shot(page, '14e-window-settings');
        await page.keyboard.press('Escape');
        // Gone from the folder's settings: the window goes back to the default.
        writeFolderSettings({});
        await until(() => cli('config').effective.task, (t) => t === 'general', 'the window\'s task after the setting went');
      },
    },
    {
      name: '15c-language-model-tools',
      async run(page) {
        const archived = cli('search', 'Grüß dich').hits;
        if (!archived.length) throw new Error('nothing archived matches "Grüß dich"');
        fs.writeFileSync(
          probeIn,
          JSON.stringify([
            { tool: 'contextls_context', input: { maxTokens: 3000 } },
            { tool: 'contextls_search_archive', input: { query: 'Grüß dich', limit: 3 } },
          ]),
        );
        fs.rmSync(probeOut, { force: true });
        await runCommand(page, 'contextls probe: Invoke Tools');
        const out = JSON.parse(await until(() => (fs.existsSync(probeOut) ? fs.readFileSync(probeOut, 'utf8') : ''), (t) => t !== '', 'the tools\' answers'));
        assertEqual(out.tools.sort(), ['contextls_context', 'contextls_search_archive'], 'the tools VS Code lists');
        const [context, search] = out.answers;
        if (context.error || search.error) throw new Error(`a tool failed: ${JSON.stringify(out.answers)}`);
        assertEqual(context.text, cli('show', '--max-tokens', '3000').text, 'the context tool\'s text vs contextls show');
        if (!search.text.includes(`### ${archived[0].item.id}: ${archived[0].item.label}`)) throw new Error(`the search tool's text: ${search.text}`);
      },
    },
    {
      name: '15d-show-context-after-a-reload',
      async run(page) {
        await runCommand(page, 'contextls: Show Context');
        await page.locator('.tab.active', { hasText: 'Context.md' }).waitFor({ timeout: STEP_MS });
        await page.reload({ waitUntil: 'domcontentloaded' });
        await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
        // The tab is back by itself, once, and shows the window (not an Untitled copy, not dirty).
        await page.locator('.tab', { hasText: 'Context.md' }).first().waitFor({ timeout: STEP_MS });
        await sleep(1500);
        const tabs = await page.locator('.tab').allTextContents();
        if (tabs.some((t) => t.includes('Untitled'))) throw new Error(`Untitled tabs after the reload: ${JSON.stringify(tabs)}`);
        assertEqual(await page.locator('.tab.dirty').count(), 0, 'dirty tabs after the reload');
        await page.locator('.tab', { hasText: 'Context.md' }).first().click();
        await page.locator('.tab.active', { hasText: 'Context.md' }).waitFor({ timeout: STEP_MS });
        // (the editor keeps where it was scrolled to: go to the top)
        const top = async () => {
          await page.keyboard.press('Control+Home');
          return editorText(page);
        };
        await until(top, (t) => /^## Context/.test(t), 'the context after the reload');
        assertEqual((await page.locator('.tab').allTextContents()).filter((t) => t.includes('Context.md')).length, 1, 'Context.md tabs after the reload');
        await shot(page, '15d-after-reload');
      },
    },
    {
      name: '17-first-run-without-contextls-on-path',
      async run(page) {
        await runCommand(page, 'Notifications: Clear All Notifications');
        // The default command, `contextls connect`, with contextls neither on PATH nor in ~/.local/bin.
        writeFolderSettings({ 'contextls.maxTokens': 16000, 'contextls.server.command': '' });
        const toast = await toastWith(page, 'was not found');
        const said = (await toast.innerText()).replace(/\s+/g, ' ');
        for (const part of ['looked on PATH, ', '~/.local/bin)', 'pipx install /path/to/contextls', 'uv tool install /path/to/contextls', 'How to Install', 'Open Settings', 'Show Output']) {
          if (!said.includes(part)) throw new Error(`the first-run message lacks ${JSON.stringify(part)}: ${said}`);
        }
        await statusText(page, (t) => t === 'contextls: not running', 'with no contextls');
        await openContextView(page);
        const welcome = page.locator('.pane-body', { hasText: 'The contextls server is not running.' }).first();
        await welcome.waitFor({ timeout: STEP_MS });
        await shot(page, '17a-first-run-not-found');
        // Installed the way pipx and uv do, into ~/.local/bin: Restart Server finds it there.
        fs.symlinkSync(CONTEXTLS, path.join(LOCAL_BIN, 'contextls'));
        await welcome.locator('.monaco-button', { hasText: 'Restart Server' }).click();
        await statusText(page, (t) => / tokens · \d+\/50 items$/.test(t), 'after installing into ~/.local/bin');
        assertEqual(codeServer.processes(/\.local\/bin\/contextls connect/).length, 1, 'the bridge to the daemon, from ~/.local/bin');
        // The output says where it was found, and carries the daemon's log.
        await runCommand(page, 'contextls: Show Output');
        const output = page.locator('.panel .monaco-editor .view-lines').first();
        await until(async () => ((await output.textContent()) ?? '').replace(/\u00a0/g, ' '), (t) => t.includes(`found ${LOCAL_BIN}/contextls`) && t.includes("daemon's log"), 'the contextls output');
        await shot(page, '17b-first-run-found');
        // The setting changed while no server ran reached the window once one did.
        const status = await until(() => cli('status'), (st) => st.maxTokens === 16000, 'the window\'s maxTokens');
        await statusText(page, (t) => t === expectedStatus(status), 'the status from the daemon');
      },
    },
  ];
  list.push(...settingsScenarios({ shot, codeServer }), ...structureScenarios({ shot }));
  return Object.fromEntries(list.map((s) => [s.name, s]));
}

module.exports = { personScenarios, explorerMenu, editorText };
