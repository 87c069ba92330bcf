// @ts-check
// The window from the editor: adding, evicting and restoring, settings, copying, the items view
// and its inline actions, symbols, problems, highlights, clearing, errors, the terminal, a crash.
'use strict';
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const {
  STEP_MS, sleep, runCommand, openFile, statusItem, statusText, viewRows, highlightedLines, highlightClasses, dialogFocus, toastWith,
} = require('./workbench.cjs');
const {
  CONTEXTLS, WS, DB, UNI_NAME, UNI_LINES, BIG_NAME, MD_NAME, JSON_NAME, MULTI_NAME, CONTEXTLS_ENV,
  writeFolderSettings, cli, tokensOf, count, expectedStatus, serverWindow, assertEqual, range,
} = require('./fixture.cjs');

/** @typedef {import('playwright-core').Page} Page */

/**
 * @param {{ artifacts: string, codeServer: import('./codeServer.cjs').CodeServer }} env
 * @returns {{name: string, run: (page: Page) => Promise<void>}[]}
 */
function windowScenarios({ artifacts: ARTIFACTS, codeServer }) {
  const CLI_ENV = { ...process.env, ...CONTEXTLS_ENV };
  return [
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
      assertEqual(text.endsWith(' · 2/50 items'), true, 'status bar item count');
      // What a screen reader says: words, no markdown.
      const spoken = await statusItem(page).locator('a').getAttribute('aria-label');
      const expectedSpoken =
        `contextls: ${status.tokens.toLocaleString('en-US')} of ${(status.budget || status.maxTokens).toLocaleString('en-US')} ${status.model} tokens, exact ` +
        `(${status.percent >= 10 ? Math.round(status.percent) : Math.round(status.percent * 10) / 10} %), ` +
        `2 of 50 items. Next to be evicted: ${first.label}`;
      assertEqual(spoken, expectedSpoken, 'the status item\'s accessible name');
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
      // A budget one token short of all three (as rendered): adding big.txt evicts exactly the oldest
      // item. In chronological order; the stable order evicts in batches, down to 80 % of the budget.
      const held = cli('status').tokens;
      const budget = held + big - 1;
      writeFolderSettings({ 'contextls.maxTokens': budget, 'contextls.renderOrder': 'chronological' });
      await statusText(page, (t) => t.startsWith(`${count(held)}/${count(budget)} gpt-4o tokens `), 'after lowering maxTokens');
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
      // The toast brings the item back, or offers the archive (it hides after a while).
      const buttons = (await toast.locator('.monaco-button').allTextContents()).map((b) => b.trim());
      assertEqual(buttons, ['Restore It', 'Restore from Archive…'], 'the eviction toast\'s buttons');
      await toast.locator('.monaco-button', { hasText: 'Restore It' }).click();
      // A restore is an explicit add: it slides the window, asking nothing, and says what it evicted.
      await serverWindow((it) => it.some((i) => i.id === first.id) && !it.some((i) => i.id === second.id), 'after Restore');
      assertEqual(await page.locator('.monaco-dialog-box').count(), 0, 'dialogs after Restore');
      const next = await toastWith(page, `${second.label} (`);
      const said = (await next.locator('.notification-list-item-message').textContent()) ?? '';
      if (!said.startsWith('contextls evicted 1 item')) throw new Error(`the restore's eviction toast: ${said}`);
      await page.screenshot({ path: path.join(ARTIFACTS, '2b-restore-slides.png') });
      await viewRows(page).filter({ hasText: first.label }).first().waitFor({ timeout: STEP_MS });
      await runCommand(page, 'Notifications: Clear All Notifications');
    },
  },
  {
    name: '3-settings-follow',
    async run(page) {
      writeFolderSettings({ 'contextls.maxTokens': 16000 });
      const text = await statusText(page, (t) => / ?\S+\/16k gpt-4o tokens · \d+\/50 items$/.test(t), 'after maxTokens = 16000');
      // The setting went to the window itself: the command line sees it too.
      const status = cli('status');
      assertEqual(status.maxTokens, 16000, 'the window\'s maxTokens');
      assertEqual(text, expectedStatus(status), 'status bar vs the server');
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
      const shown = await statusText(page, (t) => t.endsWith(` · ${before.itemCount}/50 items`), 'before the CLI adds a note');
      execFileSync(CONTEXTLS, ['--storage', DB, '--workspace', WS, 'add-text', '--kind', 'custom', 'vom Terminal aus'], {
        env: CLI_ENV,
        timeout: 30000,
      });
      const after = cli('status');
      if (after.itemCount !== before.itemCount + 1) throw new Error(`the CLI's add did not land: ${JSON.stringify(after)}`);
      // The bar and the command line agree on the window with the note in it. (A stale line of the
      // previous scenario is still being settled meanwhile: its rendering, and so the totals, move
      // by a few tokens for both, so they are compared again until they meet.)
      const now = await statusText(page, (t) => t.endsWith(` · ${after.itemCount}/50 items`) && t === expectedStatus(cli('status')), 'after the CLI added a note');
      console.log(`[e2e] the status bar went from ${shown} to ${now}; the command line said ${expectedStatus(before)}, then ${expectedStatus(after)}`);
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
        await row().locator(`.action-label[aria-label^="${title}"]`).click();
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
      const held = cli('ls').items.length;
      await runCommand(page, 'contextls: Clear Context');
      // One button keeps everything (the dialog's own cancel: Escape too), none says the same again.
      let { dialog } = await dialogFocus(page);
      assertEqual((await dialog.locator('.monaco-button').allTextContents()).map((b) => b.trim()).sort(), ['Clear All', 'Keep the Window'], 'Clear\'s buttons');
      await page.screenshot({ path: path.join(ARTIFACTS, '12a-clear-dialog.png') });
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached', timeout: STEP_MS });
      assertEqual(cli('ls').items.length, held, 'items after Escape');
      await runCommand(page, 'contextls: Clear Context');
      ({ dialog } = await dialogFocus(page));
      await dialog.locator('.monaco-button', { hasText: /^Clear All$/ }).click();
      await serverWindow((it) => it.length === 0, 'after Clear');
      await statusText(page, (t) => t === '0/16k gpt-4o tokens · 0/50 items', 'after Clear');
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
      await statusText(page, (t) => t === '0/100 gpt-4o tokens · 0/50 items', 'after maxTokens = 100');
      await openFile(page, BIG_NAME);
      await runCommand(page, 'contextls: Add File');
      // The refusal names what it refused, then says the server's figures.
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: `contextls: ${BIG_NAME}: item has ` }).first();
      await toast.waitFor({ timeout: STEP_MS });
      const said = (await toast.innerText()).replace(/\s+/g, ' ');
      if (!/ tokens.*the budget is 100\b/.test(said)) throw new Error(`the refusal: ${said}`);
      await toast.locator('.codicon-error').first().waitFor({ timeout: STEP_MS });
      await page.waitForTimeout(500);
      await page.screenshot({ path: path.join(ARTIFACTS, '13a-server-error.png') });
      await toast.locator('.monaco-button', { hasText: 'Open Settings' }).click();
      await page.locator('.tab.active', { hasText: 'Settings' }).waitFor({ timeout: STEP_MS });
      assertEqual(cli('ls').items.length, 0, 'a refused add changes nothing');
      writeFolderSettings({ 'contextls.maxTokens': 16000 });
      await statusText(page, (t) => t === '0/16k gpt-4o tokens · 0/50 items', 'after maxTokens = 16000');
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
      const status = cli('status');
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
  ]; 
}

module.exports = { windowScenarios };
