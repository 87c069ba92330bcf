// @ts-check
// End-to-end test of the packaged extension in a real VS Code (code-server) against the real
// server, driven from headless Chromium by playwright-core. Nothing is mocked: the .vsix is
// installed into code-server, the extension spawns `contextls serve`, and the test reads the
// server's window over its own connection (`contextls --json ls`) to compare ranges and texts.
//
// Usage: node test/e2e/e2e.cjs
// Env:   CODE_SERVER    code-server executable (scripts/vscode-e2e-env.sh prints it)
//        CONTEXTLS_BIN  the contextls executable (default: <repo>/.venv/bin/contextls)
//        VSIX           the package to install (default: dist/contextls.vsix)
//        ARTIFACTS      where screenshots and logs go (default: test-artifacts/e2e)
//        CHROMIUM       browser executable (default: /usr/bin/chromium)
// Prints `e2e: N passed, N failed` and exits non-zero on any failure.
'use strict';
const { chromium } = require('playwright-core');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { CodeServer } = require('./codeServer.cjs');
const {
  STEP_MS, sleep, runCommand, openFile, statusItem, statusText, viewRows, highlightedLines, highlightClasses,
} = require('./workbench.cjs');

/** @typedef {import('playwright-core').Page} Page */

const EXT_DIR = path.resolve(__dirname, '../..');
const REPO = path.resolve(EXT_DIR, '../..');
const CODE_SERVER = required('CODE_SERVER');
const CONTEXTLS = process.env.CONTEXTLS_BIN || path.join(REPO, '.venv/bin/contextls');
const VSIX = path.resolve(process.env.VSIX || path.join(EXT_DIR, 'dist/contextls.vsix'));
const ARTIFACTS = path.resolve(process.env.ARTIFACTS || path.join(EXT_DIR, 'test-artifacts/e2e'));
const DEADLINE_MS = 6 * 60 * 1000; // the whole run, whatever happens

const t0 = Date.now();
const log = (/** @type {unknown[]} */ ...a) => console.log(`[e2e ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

function required(/** @type {string} */ name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (see the header of ${__filename})`);
  return v;
}

// ---------------------------------------------------------------- the workspace

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'contextls-vscode-e2e-'));
const WS = path.join(tmp, 'wörkspace');
const DB = path.join(tmp, 'state', 'contextls.sqlite3');
const XDG = path.join(tmp, 'xdg');
const USER_DATA = path.join(tmp, 'user-data');
const EXTENSIONS = path.join(tmp, 'extensions');
for (const d of [WS, path.dirname(DB), XDG, path.join(USER_DATA, 'User'), EXTENSIONS, ARTIFACTS, path.join(WS, '.vscode')]) {
  fs.mkdirSync(d, { recursive: true });
}
// A non-ASCII file name and text, with a character outside the BMP (two UTF-16 code units).
const UNI_NAME = 'ünï.py';
const UNI_LINES = ['def grüße(name):', '    return f"Grüß dich, {name}!"', '', 'RÉSUMÉ = "😀 ünïcode"', ''];
fs.writeFileSync(path.join(WS, UNI_NAME), UNI_LINES.join('\n').normalize('NFC'));
const BIG_NAME = 'big.txt';
fs.writeFileSync(
  path.join(WS, BIG_NAME),
  Array.from({ length: 30 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join('\n') + '\n',
);
const MD_NAME = 'nötizen.md';
fs.writeFileSync(path.join(WS, MD_NAME), '# Anfang\n\nerster Absatz\n\n## Größe\n\nzweiter Absatz 😀\n');
const JSON_NAME = 'kaputt.json';
fs.writeFileSync(path.join(WS, JSON_NAME), '{\n  "a": 1,,\n  "b": 2\n}\n');
const MULTI_NAME = 'mehrfach.txt';
fs.writeFileSync(path.join(WS, MULTI_NAME), 'eins\n\nzwei\n\ndrei\n');
// A folder for the Explorer: two text files and a binary one (skipped when adding the folder).
const SUB = 'ördner';
fs.mkdirSync(path.join(WS, SUB));
fs.writeFileSync(path.join(WS, SUB, 'a.txt'), 'erste Datei\n');
fs.writeFileSync(path.join(WS, SUB, 'b.py'), 'print("zweite")\n');
fs.writeFileSync(path.join(WS, SUB, 'c.bin'), Buffer.from([0, 1, 2, 0, 255, 0]));
const WS_SETTINGS = path.join(WS, '.vscode', 'settings.json');
writeFolderSettings({ 'contextls.maxTokens': 8000 });
fs.writeFileSync(
  path.join(USER_DATA, 'User', 'settings.json'),
  JSON.stringify(
    {
      'workbench.startupEditor': 'none',
      'security.workspace.trust.enabled': false,
      'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'update.mode': 'none',
      'workbench.tips.enabled': false,
      'workbench.enableExperiments': false,
      'chat.disableAIFeatures': true,
      'contextls.server.command': `${CONTEXTLS} serve`,
      'contextls.storage': DB,
    },
    null,
    2,
  ),
);

function writeFolderSettings(/** @type {Record<string, unknown>} */ settings) {
  fs.writeFileSync(WS_SETTINGS, JSON.stringify(settings, null, 2) + '\n');
}

/** The server's view of the window, over its own connection (not the extension's). */
function cli(/** @type {string[]} */ ...args) {
  const out = execFileSync(CONTEXTLS, ['--json', '--storage', DB, '--workspace', WS, ...args], {
    encoding: 'utf8',
    timeout: 30000,
    env: CLI_ENV,
  });
  return JSON.parse(out);
}
/** The CLI's daemon lives in the test's own runtime directory, and is stopped at the end. */
const CLI_ENV = {
  ...process.env,
  CONTEXTLS_CONFIG_DIR: path.join(tmp, 'cli-config'),
  CONTEXTLS_RUNTIME_DIR: path.join(tmp, 'run'),
  CONTEXTLS_STATE_DIR: path.join(tmp, 'run'),
};
function stopCliDaemon() {
  try {
    execFileSync(CONTEXTLS, ['--storage', DB, 'daemon', 'stop'], { env: CLI_ENV, timeout: 30000 });
  } catch {
    // not running: nothing to stop
  }
}
function tokensOf(/** @type {string} */ file) {
  return cli('tokens', file).tokens;
}

// ---------------------------------------------------------------- reading the server

/** What the status bar must say for a server status (the documented format). */
function expectedStatus(/** @type {any} */ s) {
  return `${count(s.tokens)}/${count(s.maxTokens)} · ${s.itemCount}/${s.maxItems}`;
}
function count(/** @type {number} */ n) {
  if (n < 1000) return String(n);
  const k = n / 1000;
  return (k >= 100 ? String(Math.round(k)) : String(Math.round(k * 10) / 10)) + 'k';
}

/** Polls the server's window until `ok` holds. */
async function serverWindow(/** @type {(items: any[]) => boolean} */ ok, what = 'server window') {
  const end = Date.now() + STEP_MS;
  let items = [];
  while (Date.now() < end) {
    items = cli('ls').items;
    if (ok(items)) return items;
    await sleep(300);
  }
  throw new Error(`${what}: the server's window holds ${JSON.stringify(items.map((i) => i.label))}`);
}

function assertEqual(/** @type {unknown} */ actual, /** @type {unknown} */ expected, /** @type {string} */ what) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}

// ---------------------------------------------------------------- the scenarios

/** @type {{name: string, run: (page: Page) => Promise<void>}[]} */
const scenarios = [
  {
    name: '1-add-selection',
    async run(page) {
      await openFile(page, UNI_NAME);
      // Lines 1-2: from the start of line 1 to the start of line 3.
      await page.keyboard.press('Control+Home');
      await page.keyboard.press('Shift+ArrowDown');
      await page.keyboard.press('Shift+ArrowDown');
      await runCommand(page, 'contextls: Add Selection');
      let items = await serverWindow((it) => it.length === 1, 'after adding lines 1-2');
      const [first] = items;
      assertEqual(first.metadata.path, UNI_NAME, 'item path');
      assertEqual([first.metadata.startLine, first.metadata.endLine], [1, 2], 'item lines');
      assertEqual(first.content, UNI_LINES.slice(0, 2).join('\n') + '\n', 'item text');
      // Part of line 4 after an astral character: `ünïcode"` starts at UTF-16 column 13.
      await page.keyboard.press('Control+Home');
      for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown');
      await page.keyboard.press('End');
      for (let i = 0; i < 8; i++) await page.keyboard.press('Shift+ArrowLeft');
      await runCommand(page, 'contextls: Add Selection');
      items = await serverWindow((it) => it.length === 2, 'after adding part of line 4');
      const second = items[1];
      assertEqual(second.content, 'ünïcode"', 'text of the selection after 😀');
      assertEqual([second.metadata.startLine, second.metadata.endLine], [4, 4], 'lines of the selection after 😀');
      const status = cli('status');
      const text = await statusText(page, (t) => t === expectedStatus(status), 'after two adds');
      assertEqual(text.endsWith(' · 2/50'), true, 'status bar item count');
      // A click on the status bar focuses the items view, which lists both, newest first.
      await statusItem(page).click();
      await viewRows(page).first().waitFor({ timeout: STEP_MS });
      await page.waitForFunction(
        (n) => document.querySelectorAll('.pane .monaco-list-row .label-name').length >= n, 2, { timeout: STEP_MS });
      const labels = (await viewRows(page).locator('.label-name').allTextContents()).map((s) => s.trim());
      assertEqual(labels, [second.label, first.label], 'items view rows (newest first)');
    },
  },
  {
    name: '2-overflow-evict-restore',
    async run(page) {
      const before = cli('ls').items;
      const [first, second] = before;
      const big = tokensOf(path.join(WS, BIG_NAME));
      // A budget one token short of all three: adding big.txt evicts exactly the oldest item.
      const budget = first.tokens + second.tokens + big - 1;
      writeFolderSettings({ 'contextls.maxTokens': budget });
      await statusText(page, (t) => t.startsWith(`${count(first.tokens + second.tokens)}/${count(budget)} `), 'after lowering maxTokens');
      await openFile(page, BIG_NAME);
      await runCommand(page, 'contextls: Add File');
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'contextls evicted' }).first();
      await toast.waitFor({ timeout: STEP_MS });
      const message = (await toast.locator('.notification-list-item-message').textContent()) ?? '';
      if (!message.includes(first.label)) throw new Error(`the eviction notification does not name ${first.label}: ${message}`);
      const window = await serverWindow((it) => it.length === 2 && !it.some((i) => i.id === first.id), 'after overflow');
      assertEqual(window.map((i) => i.metadata.path), [UNI_NAME, BIG_NAME], 'window after overflow');
      await page.waitForTimeout(500);
      await page.screenshot({ path: path.join(ARTIFACTS, '2a-eviction-notification.png') });
      // Above 90 % of the budget the item turns to the warning colour; its tooltip names the
      // item evicted last and the one that goes next.
      const kind = await statusItem(page).getAttribute('class');
      if (!/\bwarning-kind\b/.test(kind ?? '')) throw new Error(`status bar item is not a warning: ${kind}`);
      await statusItem(page).hover();
      const hover = page.locator('.monaco-hover, .workbench-hover', { hasText: 'Last evicted' }).first();
      await hover.waitFor({ timeout: STEP_MS });
      const tip = ((await hover.textContent()) ?? '').replace(/\s+/g, ' ');
      for (const part of [`Next to be evicted: ${second.label}`, `Last evicted:`, first.label]) {
        if (!tip.includes(part)) throw new Error(`the tooltip lacks ${JSON.stringify(part)}: ${tip}`);
      }
      await page.mouse.move(700, 400);
      await toast.locator('.monaco-button', { hasText: 'Restore' }).click();
      await serverWindow((it) => it.some((i) => i.id === first.id), 'after Restore');
      await viewRows(page).filter({ hasText: first.label }).first().waitFor({ timeout: STEP_MS });
    },
  },
  {
    name: '3-settings-follow',
    async run(page) {
      writeFolderSettings({ 'contextls.maxTokens': 16000 });
      const text = await statusText(page, (t) => / ?\S+\/16k · \d+\/50$/.test(t), 'after maxTokens = 16000');
      // The CLI's own server applies its own limits: compare what the window holds.
      const status = cli('status');
      assertEqual(text, expectedStatus({ ...status, maxTokens: 16000 }), 'status bar vs the server');
    },
  },
  {
    name: '4-show-context',
    async run(page) {
      await runCommand(page, 'contextls: Show Context');
      await page.locator('.tab.active', { hasText: 'Untitled' }).waitFor({ timeout: STEP_MS });
      const editor = page.locator('.editor-instance .monaco-editor .view-lines').first();
      // The editor renders spaces as U+00A0.
      await page.waitForFunction(
        () => /^##\s+Context/.test(document.querySelector('.editor-instance .monaco-editor .view-lines')?.textContent ?? ''),
        undefined,
        { timeout: STEP_MS },
      );
      const text = ((await editor.textContent()) ?? '').replace(/\u00a0/g, ' ');
      if (!text.includes(UNI_NAME)) throw new Error(`the rendered context does not mention ${UNI_NAME}: ${text.slice(0, 200)}`);
      const language = await page.locator('.statusbar-item[id="status.editor.mode"]').textContent();
      assertEqual((language ?? '').trim(), 'Markdown', 'language of the opened document');
    },
  },
  {
    name: '5-copy-context-matches-server',
    async run(page) {
      await runCommand(page, 'contextls: Copy Context');
      const expected = cli('show').text;
      const end = Date.now() + STEP_MS;
      let copied = '';
      while (Date.now() < end && copied !== expected) {
        copied = await page.evaluate(() => navigator.clipboard.readText()).catch(() => '');
        if (copied !== expected) await sleep(300);
      }
      assertEqual(copied, expected, 'the copied context is the server\'s rendering');
    },
  },
  {
    name: '5b-multi-cursor-and-stale',
    async run(page) {
      await openFile(page, MULTI_NAME);
      await page.keyboard.press('Control+Home');
      for (let i = 0; i < 4; i++) await runCommand(page, 'Add Cursor Below');
      // Five empty selections: each non-blank line is added on its own, blank ones are skipped.
      await runCommand(page, 'contextls: Add Selection');
      const items = await serverWindow(
        (it) => it.filter((i) => i.metadata.path === MULTI_NAME).length === 3, 'after adding five cursors');
      const mine = items.filter((i) => i.metadata.path === MULTI_NAME);
      assertEqual(mine.map((i) => [i.metadata.startLine, i.content]), [[1, 'eins'], [3, 'zwei'], [5, 'drei']], 'one item per cursor');
      await page.keyboard.press('Escape');
      const end = Date.now() + STEP_MS;
      while (Date.now() < end && (await highlightClasses(page)).length !== 3) await sleep(300);
      assertEqual((await highlightClasses(page)).length, 3, 'highlighted lines');
      // Replacing line 1's text makes its item stale: the view says so, its highlight changes.
      await page.keyboard.press('Control+Home');
      await page.keyboard.press('Shift+End');
      await page.keyboard.type('uno');
      await statusItem(page).click();
      await viewRows(page).filter({ hasText: `${MULTI_NAME}:1` }).filter({ hasText: 'stale' }).first().waitFor({ timeout: STEP_MS });
      const classes = await highlightClasses(page);
      if (classes.length !== 3 || classes[0] === classes[1] || classes[1] !== classes[2]) {
        throw new Error(`the stale line should look different: ${JSON.stringify(classes)}`);
      }
    },
  },
  {
    name: '5c-a-change-from-the-cli-shows-unasked',
    async run(page) {
      // Another process changes the window; the extension sends nothing, yet its status
      // bar follows within a second or so (the server notices other processes' commits).
      const before = cli('status');
      execFileSync(CONTEXTLS, ['--storage', DB, '--workspace', WS, 'add-text', '--kind', 'custom', 'vom Terminal aus'], {
        env: CLI_ENV,
        timeout: 30000,
      });
      const after = { ...cli('status'), maxTokens: before.maxTokens };
      if (after.itemCount !== before.itemCount + 1) throw new Error(`the CLI's add did not land: ${JSON.stringify(after)}`);
      await statusText(page, (t) => t === expectedStatus(after), 'after the CLI added a note');
    },
  },
  {
    name: '6-add-text',
    async run(page) {
      const note = 'Nötiz: prüfe die Grenzen 😀';
      await runCommand(page, 'contextls: Add Text');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ state: 'visible', timeout: STEP_MS });
      await input.fill(note);
      await page.keyboard.press('Enter');
      const items = await serverWindow((it) => it.some((i) => i.kind === 'text'), 'after Add Text');
      assertEqual(items.find((i) => i.kind === 'text').content, note, 'text item content');
      // Left empty, the input box adds the clipboard.
      const clip = 'aus der Zwischenablage: ∑ 😀';
      await page.evaluate((t) => navigator.clipboard.writeText(t), clip);
      await runCommand(page, 'contextls: Add Text');
      await input.waitFor({ state: 'visible', timeout: STEP_MS });
      await page.keyboard.press('Enter');
      await serverWindow((it) => it.some((i) => i.kind === 'text' && i.content === clip), 'after Add Text from the clipboard');
    },
  },
  {
    name: '7-pin-unpin-remove-in-view',
    async run(page) {
      const textItem = cli('ls').items.find((/** @type {any} */ i) => i.kind === 'text');
      await statusItem(page).click();
      const row = () => viewRows(page).filter({ hasText: textItem.label }).first();
      const inline = async (/** @type {string} */ title) => {
        await row().hover();
        await row().locator(`.action-label[aria-label="${title}"]`).click();
      };
      await inline('Pin Item');
      await serverWindow((it) => it.some((i) => i.id === textItem.id && i.pinned), 'after Pin');
      await viewRows(page).filter({ hasText: 'Pinned (1)' }).first().waitFor({ timeout: STEP_MS });
      await inline('Unpin Item');
      await serverWindow((it) => it.some((i) => i.id === textItem.id && !i.pinned), 'after Unpin');
      await inline('Remove Item');
      await serverWindow((it) => !it.some((i) => i.id === textItem.id), 'after Remove');
      await row().waitFor({ state: 'detached', timeout: STEP_MS });
    },
  },
  {
    name: '8-search-and-restore',
    async run(page) {
      const archived = cli('search', 'ünïcode').hits;
      if (!archived.length) throw new Error('nothing archived matches ünïcode');
      await runCommand(page, 'contextls: Search Archive');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ state: 'visible', timeout: STEP_MS });
      await input.fill('ünïcode');
      const hit = page.locator('.quick-input-list .monaco-list-row', { hasText: archived[0].item.label }).first();
      await hit.waitFor({ timeout: STEP_MS });
      // Each hit says how it was found (words, meaning, or both).
      const shown = await hit.textContent();
      if (!/by (meaning\+)?words/.test(shown ?? '')) throw new Error(`the hit does not say how it was found: ${shown}`);
      await hit.click();
      await serverWindow((it) => it.some((i) => i.id === archived[0].item.id), 'after restoring the search hit');
    },
  },
  {
    name: '9-add-symbol',
    async run(page) {
      await openFile(page, MD_NAME);
      await page.keyboard.press('Control+End');
      await page.keyboard.press('ArrowUp');
      await runCommand(page, 'contextls: Add Symbol at Cursor');
      const items = await serverWindow((it) => it.some((i) => i.metadata.symbol), 'after Add Symbol');
      const symbol = items.find((i) => i.metadata.symbol);
      // (VS Code's markdown symbols are named with their hashes)
      assertEqual(symbol.metadata.symbol, '## Größe', 'symbol name');
      assertEqual(symbol.metadata.symbolKind, 'String', 'symbol kind');
      assertEqual(symbol.metadata.path, MD_NAME, 'symbol file');
      if (!symbol.content.startsWith('## Größe') || !symbol.content.includes('zweiter Absatz 😀')) {
        throw new Error(`symbol text: ${JSON.stringify(symbol.content)}`);
      }
    },
  },
  {
    name: '10-add-problems',
    async run(page) {
      await openFile(page, JSON_NAME);
      await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: STEP_MS });
      await runCommand(page, 'contextls: Add Problems');
      const items = await serverWindow((it) => it.some((i) => i.kind === 'error'), 'after Add Problems');
      const problem = items.find((i) => i.kind === 'error');
      if (!/^kaputt\.json:2:\d+: error: /m.test(problem.content)) throw new Error(`problem text: ${problem.content}`);
    },
  },
  {
    name: '11-highlights',
    async run(page) {
      // A click on an item in the view opens its file with its lines selected...
      await statusItem(page).click();
      await viewRows(page).filter({ hasText: `${UNI_NAME}:1-2` }).first().click();
      await page.locator('.tab.active', { hasText: UNI_NAME }).waitFor({ timeout: STEP_MS });
      await page.locator('.statusbar-item', { hasText: /Ln 2, Col \d+ \(\d+ selected\)/ }).first().waitFor({ timeout: STEP_MS });
      // ...and the editor shows the lines of ünï.py:1-2 and :4 (restored) highlighted.
      const spans = cli('ls').items.filter((/** @type {any} */ i) => i.metadata.path === UNI_NAME && i.kind === 'code');
      const lines = new Set(spans.flatMap((/** @type {any} */ i) => range(i.metadata.startLine, i.metadata.endLine)));
      const end = Date.now() + STEP_MS;
      let found = 0;
      while (Date.now() < end && found !== lines.size) {
        found = await highlightedLines(page);
        if (found !== lines.size) await sleep(300);
      }
      assertEqual(found, lines.size, 'highlighted lines');
    },
  },
  {
    name: '12-clear',
    async run(page) {
      await runCommand(page, 'contextls: Clear Context');
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: STEP_MS });
      await dialog.locator('.monaco-button', { hasText: /^Clear$/ }).click();
      await serverWindow((it) => it.length === 0, 'after Clear');
      await statusText(page, (t) => t === '0/16k · 0/50', 'after Clear');
      // ...and the highlights of ünï.py (the active editor) are gone.
      const end = Date.now() + STEP_MS;
      while (Date.now() < end && (await highlightedLines(page)) > 0) await sleep(300);
      assertEqual(await highlightedLines(page), 0, 'highlighted lines after Clear');
    },
  },
  {
    name: '13-server-error-shown',
    async run(page) {
      writeFolderSettings({ 'contextls.maxTokens': 100 });
      await statusText(page, (t) => t === '0/100 · 0/50', 'after maxTokens = 100');
      await openFile(page, BIG_NAME);
      await runCommand(page, 'contextls: Add File');
      const big = tokensOf(path.join(WS, BIG_NAME)).toLocaleString('en-US');
      const message = `contextls: item has ${big} tokens; the budget is 100`;
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: message }).first();
      await toast.waitFor({ timeout: STEP_MS });
      await toast.locator('.codicon-error').first().waitFor({ timeout: STEP_MS });
      await page.waitForTimeout(500);
      await page.screenshot({ path: path.join(ARTIFACTS, '13a-server-error.png') });
      await toast.locator('.monaco-button', { hasText: 'Open Settings' }).click();
      await page.locator('.tab.active', { hasText: 'Settings' }).waitFor({ timeout: STEP_MS });
      assertEqual(cli('ls').items.length, 0, 'a refused add changes nothing');
      writeFolderSettings({ 'contextls.maxTokens': 16000 });
      await statusText(page, (t) => t === '0/16k · 0/50', 'after maxTokens = 16000');
    },
  },
  {
    name: '14-explorer-folder',
    async run(page) {
      await page.keyboard.press('Control+Shift+E');
      const folder = page.locator('.explorer-folders-view .monaco-list-row', { hasText: SUB }).first();
      await folder.waitFor({ timeout: STEP_MS });
      await folder.click({ button: 'right' });
      const entry = page.locator('.context-view .action-item', { hasText: /^Add File$/ }).first();
      await entry.waitFor({ timeout: STEP_MS });
      // (a click while the menu still settles only highlights the entry: choose it by keyboard)
      await entry.hover();
      await page.keyboard.press('Enter');
      const items = await serverWindow((it) => it.length === 2, 'after adding the folder');
      assertEqual(items.map((i) => i.metadata.path).sort(), [`${SUB}/a.txt`, `${SUB}/b.py`], 'files of the folder (not the binary one)');
      assertEqual(items.map((i) => i.kind), ['file', 'file'], 'kinds');
    },
  },
  {
    name: '15-terminal-selection',
    async run(page) {
      await runCommand(page, 'Terminal: Create New Terminal');
      const terminal = page.locator('.terminal-wrapper.active .xterm').first();
      await terminal.waitFor({ timeout: STEP_MS });
      await terminal.click();
      await page.keyboard.type('echo grüße-vom-terminal\n');
      await page.locator('.terminal-wrapper.active .xterm-rows', { hasText: /grüße-vom-terminal[\s\S]*grüße-vom-terminal/ })
        .waitFor({ timeout: 8000 })
        .catch(() => undefined); // a canvas renderer has no text to wait for: the time is up
      await runCommand(page, 'Terminal: Select All');
      await runCommand(page, 'contextls: Add Terminal Selection');
      const items = await serverWindow((it) => it.some((i) => i.kind === 'repl-history'), 'after Add Terminal Selection');
      const transcript = items.find((i) => i.kind === 'repl-history');
      if (!transcript.content.includes('grüße-vom-terminal')) throw new Error(`terminal text: ${transcript.content}`);
    },
  },
  {
    name: '15b-server-crash-restarts',
    async run(page) {
      const servers = codeServer.processes(/contextls\S* serve/);
      assertEqual(servers.length, 1, 'one contextls server for the window');
      const [crashed] = servers;
      process.kill(/** @type {number} */ (crashed), 'SIGKILL');
      // The client starts it again, and the status bar shows the window again.
      const status = { ...cli('status'), maxTokens: 16000 };
      const end = Date.now() + STEP_MS;
      let now = codeServer.processes(/contextls\S* serve/);
      while (Date.now() < end && (now.length !== 1 || now[0] === crashed)) {
        await sleep(300);
        now = codeServer.processes(/contextls\S* serve/);
      }
      if (now.length !== 1 || now[0] === crashed) throw new Error(`no new server after the crash: ${JSON.stringify(now)}`);
      await statusText(page, (t) => t === expectedStatus(status), 'after the server restarted');
    },
  },
  {
    name: '16-missing-server-command',
    async run(page) {
      writeFolderSettings({ 'contextls.maxTokens': 16000, 'contextls.server.command': '/nonexistent/contextls serve' });
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'was not found' }).first();
      await toast.waitFor({ timeout: STEP_MS });
      // The status bar no longer shows the stopped server's numbers.
      await statusText(page, (t) => t === 'contextls', 'with no server');
      await page.waitForTimeout(500);
      await page.screenshot({ path: path.join(ARTIFACTS, '16a-missing-server.png') });
      await toast.locator('.monaco-button', { hasText: 'Open Setting' }).click();
      await page.locator('.tab.active', { hasText: 'Settings' }).waitFor({ timeout: STEP_MS });
      // Back to the real server: it starts again and the status comes back.
      writeFolderSettings({ 'contextls.maxTokens': 16000 });
      const status = { ...cli('status'), maxTokens: 16000 };
      await statusText(page, (t) => t === expectedStatus(status), 'after the server command is fixed');
    },
  },
];

function range(/** @type {number} */ a, /** @type {number} */ b) {
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}

// ---------------------------------------------------------------- main

const codeServer = new CodeServer({
  executable: CODE_SERVER,
  userData: USER_DATA,
  extensions: EXTENSIONS,
  xdg: XDG,
  logFile: path.join(ARTIFACTS, 'code-server.log'),
});
const stopCodeServer = () => codeServer.stop();

async function startCodeServer() {
  log('installing', VSIX);
  codeServer.install(VSIX);
  const { url, pid } = await codeServer.start(WS);
  log(`code-server pid ${String(pid)}: ${url}`);
  return url;
}

async function main() {
  let passed = 0;
  let failed = 0;
  const deadline = setTimeout(() => {
    log(`FAIL: the run took longer than ${DEADLINE_MS / 1000}s`);
    stopCodeServer();
    process.exit(1);
  }, DEADLINE_MS);
  const chromeHome = path.join(tmp, 'chromium');
  /** @type {import('playwright-core').Browser | undefined} */
  let browser;
  try {
    const url = await startCodeServer();
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      env: { ...process.env, XDG_CONFIG_HOME: chromeHome, XDG_CACHE_HOME: chromeHome },
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const context = await browser.newContext({ viewport: { width: 1400, height: 850 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(url).origin });
    const page = await context.newPage();
    page.on('pageerror', (e) => log('pageerror:', e.message));
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
    // The extension is up when its status item shows the server's status (0 items).
    await statusText(page, (t) => / · 0\/50$/.test(t), 'at start');
    log('workbench loaded; contextls status:', await statusItem(page).textContent());
    for (const scenario of scenarios) {
      try {
        await scenario.run(page);
        passed++;
        log(`PASS ${scenario.name}`);
      } catch (e) {
        failed++;
        log(`FAIL ${scenario.name}: ${e instanceof Error ? e.message : String(e)}`);
      }
      await page.waitForTimeout(300);
      await page.screenshot({ path: path.join(ARTIFACTS, `${scenario.name}.png`) }).catch(() => undefined);
    }
  } catch (e) {
    failed++;
    log(`FAIL setup: ${e instanceof Error ? e.stack : String(e)}`);
  } finally {
    await browser?.close().catch(() => undefined);
    stopCodeServer();
    stopCliDaemon();
    clearTimeout(deadline);
    // The workbench's logs (extension host, the contextls output channel) are artifacts too.
    fs.cpSync(path.join(USER_DATA, 'logs'), path.join(ARTIFACTS, 'logs'), { recursive: true, force: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`e2e: ${passed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}

// However the process ends, code-server (and what it started) goes with it.
process.on('exit', stopCodeServer);
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM', 'SIGHUP'])) {
  process.on(signal, () => {
    stopCodeServer();
    process.exit(130);
  });
}
void main();
