// @ts-check
// Settings and startup as a person meets them: a number typed into the Settings UI digit by digit
// reaches the window only when the person is done, a value that would evict more than half of the
// window asks like a bulk add, and a folder that already has a window shows its status when VS Code
// opens it (and one that has none shows nothing).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { STEP_MS, sleep, runCommand, openFile, statusItem, statusText, toastWith } = require('./workbench.cjs');
const {
  REPO, CONTEXTLS, DB, CONTEXTLS_ENV, USER_DATA, OTHER, UNUSED, writeFolderSettings, cli, cliIn, stopCliDaemon, expectedStatus, until, assertEqual,
} = require('./fixture.cjs');

/** @typedef {import('playwright-core').Page} Page */

/** What VS Code wrote for contextls.maxTokens in the user's settings.json. */
function userMaxTokens() {
  try {
    return JSON.parse(fs.readFileSync(path.join(USER_DATA, 'User', 'settings.json'), 'utf8'))['contextls.maxTokens'];
  } catch {
    return 'unreadable';
  }
}

/** The Settings UI (its User tab), showing contextls.maxTokens; returns the row and its input. */
async function maxTokensInSettingsUi(/** @type {Page} */ page) {
  await runCommand(page, 'Preferences: Open Settings (UI)');
  await page.locator('.settings-editor').waitFor({ timeout: STEP_MS });
  await sleep(500);
  await page.keyboard.type('contextls.maxTokens');
  const row = page.locator('.settings-editor .setting-item-contents[data-key="contextls.maxTokens"]');
  const input = row.locator('input.setting-control-focus-target');
  await input.waitFor({ timeout: STEP_MS });
  return { row, input };
}

/** Opens `folder` in the same code-server, as a person opening another folder does. */
async function openFolder(/** @type {Page} */ page, /** @type {string} */ folder) {
  const url = new URL(page.url());
  url.searchParams.set('folder', folder);
  await page.goto(url.toString(), { waitUntil: 'domcontentloaded' });
  await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
}

/**
 * @param {{ shot: (page: Page, name: string) => Promise<unknown>, codeServer: import('./codeServer.cjs').CodeServer }} env
 * @returns {{name: string, run: (page: Page) => Promise<void>}[]}
 */
function settingsScenarios({ shot }) {
  return [
    {
      name: '15e-settings-ui-typing',
      async run(page) {
        await runCommand(page, 'Notifications: Clear All Notifications');
        // (no folder setting above the user's: the Settings UI's User tab is what counts)
        writeFolderSettings({});
        let { input } = await maxTokensInSettingsUi(page);
        await input.fill('30000');
        await until(() => cli('status').maxTokens, (m) => m === 30000, 'the window after 30000 in the Settings UI');
        const before = cli('status');
        if (before.itemCount < 2) throw new Error(`the window holds ${before.itemCount} items: too few for this test`);
        // 30000 -> 3 -> 32000, a key at a time, each once VS Code has written the value as it stands
        // (the Settings UI writes a second or so after a key): 3000, 300, 30, 3, 32, 320, 3200.
        await input.click();
        await page.keyboard.press('End');
        const written = [];
        const keys = ['Backspace', 'Backspace', 'Backspace', 'Backspace', '2', '0', '0', '0'];
        const values = [3000, 300, 30, 3, 32, 320, 3200, 32000];
        for (const [i, key] of keys.entries()) {
          await page.keyboard.press(key);
          written.push(await until(() => userMaxTokens(), (v) => v === values[i], `VS Code's setting after ${key}`));
          const now = cli('status');
          if (now.maxTokens !== 30000 || now.itemCount !== before.itemCount || now.evictedTotal !== before.evictedTotal) {
            throw new Error(`the window changed while ${written.at(-1)} was typed: ${JSON.stringify([now.maxTokens, now.itemCount, now.evictedTotal])}`);
          }
        }
        assertEqual(written, values, 'what VS Code wrote as the digits went');
        await shot(page, '15e-typing-32000');
        // Done: the person leaves the Settings UI, and the window takes 32000. Nothing was evicted.
        await runCommand(page, 'View: Close Editor');
        await until(() => cli('status').maxTokens, (m) => m === 32000, 'the window after leaving the Settings UI');
        const typed = cli('status');
        assertEqual([typed.itemCount, typed.evictedTotal], [before.itemCount, before.evictedTotal], 'items and evictions after typing 30000 -> 3 -> 32000');
        // A value that would evict more than half of the window asks like a bulk add; nothing goes.
        const items = cli('ls').items.filter((/** @type {any} */ i) => !i.pinned);
        const tokens = items.reduce((/** @type {number} */ sum, /** @type {any} */ i) => sum + i.tokens, 0);
        ({ input } = await maxTokensInSettingsUi(page));
        await input.fill('3');
        await until(() => userMaxTokens(), (v) => v === 3, 'VS Code\'s setting after typing 3');
        await runCommand(page, 'View: Close Editor');
        const toast = await toastWith(page, 'Setting maxTokens to 3 would evict');
        const said = (await toast.innerText()).replace(/\s+/g, ' ');
        const question = `Setting maxTokens to 3 would evict ${items.length} of the window's ${typed.itemCount} items (${tokens.toLocaleString('en-US')} tokens), more than half of it.`;
        if (!said.includes(question) || !said.includes('Nothing was evicted: the window keeps maxTokens 32,000.')) throw new Error(`the question: ${said}`);
        await until(() => userMaxTokens(), (v) => v === 32000, 'VS Code\'s setting, put back');
        const kept = cli('status');
        assertEqual([kept.maxTokens, kept.itemCount, kept.evictedTotal], [32000, typed.itemCount, typed.evictedTotal], 'the window after the question');
        await shot(page, '15e-settings-question');
        // Set all the same: the window takes it, and the Settings UI says what the window holds.
        await toast.locator('.monaco-button', { hasText: `Set maxTokens to 3 and Evict ${items.length}` }).click();
        await until(() => cli('status'), (st) => st.maxTokens === 3 && st.itemCount === typed.itemCount - items.length, 'the window after Set and Evict');
        await until(() => userMaxTokens(), (v) => v === 3, 'VS Code\'s setting after Set and Evict');
        await sleep(1500);
        assertEqual(await page.locator('.notifications-toasts .notification-toast', { hasText: 'contextls evicted' }).count(), 0, 'eviction toasts after consent');
        // Reset Setting: back to the default.
        const ui = await maxTokensInSettingsUi(page);
        await ui.row.hover();
        await ui.row.locator('.setting-toolbar-container .action-label').first().click();
        const reset = page.locator('.context-view .action-item', { hasText: /^Reset Setting$/ }).first();
        await reset.waitFor({ timeout: STEP_MS });
        await reset.hover();
        await page.keyboard.press('Enter');
        await runCommand(page, 'View: Close Editor');
        await until(() => cli('status').maxTokens, (m) => m === 8000, 'the window after Reset Setting');
      },
    },
    {
      name: '15f-settings-ui-pause-mid-number',
      async run(page) {
        // (no folder setting above the user's: the Settings UI's User tab is what counts)
        writeFolderSettings({});
        // Three notes the window can lose, nothing pinned: `1` would evict them all.
        cli('clear');
        for (const n of ['eins', 'zwei', 'drei']) cli('add-text', `eine Notiz ${n}`);
        const before = cli('status');
        await runCommand(page, 'Notifications: Clear All Notifications');
        let { input: typedIn } = await maxTokensInSettingsUi(page);
        const input = typedIn;
        await input.fill('1');
        await until(() => userMaxTokens(), (v) => v === 1, 'VS Code\'s setting after typing 1');
        // A pause longer than the Settings UI's wait: nothing is sent, nothing asked, nothing put back.
        await sleep(4500);
        const paused = cli('status');
        assertEqual([paused.maxTokens, paused.itemCount, paused.evictedTotal], [before.maxTokens, before.itemCount, before.evictedTotal], 'the window during the pause');
        assertEqual(await page.locator('.notifications-toasts .notification-toast').count(), 0, 'toasts during the pause');
        assertEqual(userMaxTokens(), 1, 'VS Code\'s setting during the pause');
        await shot(page, '15f-pause-at-1');
        // Typing on: 15000, which the window takes once the person leaves.
        await input.click();
        await page.keyboard.press('End');
        await page.keyboard.type('5000', { delay: 150 });
        await until(() => userMaxTokens(), (v) => v === 15000, 'VS Code\'s setting after 15000');
        await runCommand(page, 'View: Close Editor');
        await until(() => cli('status').maxTokens, (m) => m === 15000, 'the window after 15000');
        const after = cli('status');
        assertEqual([after.itemCount, after.evictedTotal], [before.itemCount, before.evictedTotal], 'items and evictions after 1 -> 15000');
        await sleep(1000);
        await runCommand(page, 'Notifications: Show Notifications');
        await sleep(500);
        assertEqual(await page.locator('.notifications-center .notification-list-item', { hasText: 'maxTokens to 1 ' }).count(), 0, 'questions about 1 in the notification center');
        await shot(page, '15f-after-15000');
        await runCommand(page, 'Notifications: Hide Notifications');
        // The default again, for what comes next.
        ({ input: typedIn } = await maxTokensInSettingsUi(page));
        await typedIn.fill('8000');
        await runCommand(page, 'View: Close Editor');
        await until(() => cli('status').maxTokens, (m) => m === 8000, 'the window after 8000');
      },
    },
    {
      name: '18-startup-status-for-a-folder-with-a-window',
      async run(page) {
        // A window made from the command line, in a folder VS Code has never opened.
        cliIn(OTHER, 'add', path.join(OTHER, 'notiz.md'));
        await openFolder(page, OTHER);
        const opened = Date.now();
        // No command, no view: the status shows when VS Code opens the folder.
        const shows = (/** @type {string} */ t) => t === expectedStatus(cliIn(OTHER, 'status')) && t.endsWith(' · 1/50 items');
        await statusText(page, shows, 'at startup of a folder with a window');
        console.log(`[e2e] the status of ${path.basename(OTHER)} showed ${Date.now() - opened} ms after the workbench`);
        await shot(page, '18a-startup-status');
        // A folder without a window: no status, and its window stays untouched.
        await openFolder(page, UNUSED);
        await sleep(6000);
        assertEqual(await statusItem(page).count(), 0, 'status items in a folder without a window');
        assertEqual(cliIn(UNUSED, 'status').revision, 0, 'the revision of the unused folder\'s window');
        await shot(page, '18b-no-window-no-status');
        // The daemon stopped (idle, a reboot): VS Code remembers the folder had a window.
        stopCliDaemon();
        await openFolder(page, OTHER);
        await statusText(page, shows, 'at startup with the daemon stopped');
      },
    },
    {
      name: '22-two-editors-one-unsaved-file',
      async run(page) {
        // VS Code (on the shared daemon here) has notiz.md open; another editor opens it too
        // and types a line at its top, unsaved: the window follows that editor, and VS Code says so.
        await openFile(page, 'notiz.md');
        const other = spawn(
          path.join(path.dirname(CONTEXTLS), 'python'),
          ['-m', 'tests.support.other_editor', OTHER, 'notiz.md', '# von woanders', CONTEXTLS, 'connect', '--stdio', '--storage', DB],
          { cwd: REPO, env: { ...process.env, ...CONTEXTLS_ENV }, stdio: ['pipe', 'pipe', 'inherit'] },
        );
        let heard = '';
        other.stdout.on('data', (/** @type {Buffer} */ data) => {
          heard += data.toString();
        });
        try {
          const toast = await toastWith(page, 'notiz.md has other unsaved text in other-editor, which changed it last');
          await until(() => cliIn(OTHER, 'ls').items[0].content, (t) => t.startsWith('# von woanders\n'), 'the window after the other editor typed');
          await shot(page, '22a-told-in-vs-code');
          await toast.locator('.codicon-notifications-clear').first().click().catch(() => undefined);
          // VS Code types in its own text: that is followed now, and the other editor is told.
          await page.keyboard.press('Control+Home');
          await page.keyboard.type('# aus VS Code');
          // A suggestion the editor shows meanwhile (it did on a loaded machine) is not
          // what Enter should take: closed first, Enter makes the new line.
          await page.keyboard.press('Escape');
          await page.keyboard.press('Enter');
          await until(() => cliIn(OTHER, 'ls').items[0].content, (t) => t.startsWith('# aus VS Code\n# Notiz'), 'the window after VS Code typed');
          await until(() => heard, (h) => /notiz\.md has other unsaved text in .+, which changed it last/.test(h), 'what the other editor was told');
          await shot(page, '22b-vs-code-followed-again');
          await runCommand(page, 'File: Revert File');
        } finally {
          other.stdin.end();
        }
      },
    },
  ];
}

module.exports = { settingsScenarios };
