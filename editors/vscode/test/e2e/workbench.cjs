// @ts-check
// Driving VS Code's workbench (code-server) from playwright-core: the palette, Quick Open, the
// status bar, the contextls view and editor decorations, located the way a user sees them.
'use strict';

/** @typedef {import('playwright-core').Page} Page */

/** How long one step may take (generous: CI shares two cores with other work). */
const STEP_MS = 30000;

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/** Runs a palette command by its exact title ("contextls: Add Selection"). */
async function runCommand(/** @type {Page} */ page, /** @type {string} */ title) {
  // (no Escape first: in the editor it would drop the selection the command acts on)
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: STEP_MS });
  await input.fill('>' + title);
  const row = page
    .locator('.quick-input-list .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRegExp(title)}$`) }) })
    .first();
  await row.waitFor({ timeout: STEP_MS });
  await row.click();
}

/** Opens a workspace file through Quick Open. */
async function openFile(/** @type {Page} */ page, /** @type {string} */ name) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: STEP_MS });
  await input.fill(name);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first();
  await row.waitFor({ timeout: STEP_MS });
  await page.keyboard.press('Enter');
  await page.locator('.tab.active', { hasText: name }).waitFor({ timeout: STEP_MS });
  await page.locator('.monaco-editor .view-lines').first().click();
}

const statusItem = (/** @type {Page} */ page) => page.locator('.statusbar-item:has(.codicon-library)').first();

/** Waits until the status bar item's text satisfies `ok`; returns it. */
async function statusText(/** @type {Page} */ page, /** @type {(t: string) => boolean} */ ok, what = 'status bar') {
  const end = Date.now() + STEP_MS;
  let text = '';
  while (Date.now() < end) {
    text = ((await statusItem(page).textContent({ timeout: STEP_MS })) ?? '').replace(/\s+/g, ' ').trim();
    if (ok(text)) return text;
    await sleep(200);
  }
  throw new Error(`${what}: status bar says ${JSON.stringify(text)}`);
}

/** The rows of a view of the contextls container, by the view's title. */
const paneRows = (/** @type {Page} */ page, /** @type {string} */ title) =>
  page.locator(`.pane:has(.pane-header:has-text("${title}")) .monaco-list-row`);
const viewRows = (/** @type {Page} */ page) => paneRows(page, 'Context Window');

/** Opens the contextls container from the activity bar (what activates the extension lazily). */
async function openContextView(/** @type {Page} */ page) {
  const header = page.locator('.pane-header', { hasText: 'Context Window' }).first();
  if (await header.isVisible()) return;
  // (a click on the icon of the container already shown would close the sidebar)
  await page.locator('.activitybar .action-item a[aria-label^="contextls"]').first().click();
  await header.waitFor({ timeout: STEP_MS });
}

/** The visible modal dialog and the text of the button that has the focus. */
async function dialogFocus(/** @type {Page} */ page) {
  const dialog = page.locator('.monaco-dialog-box');
  await dialog.waitFor({ timeout: STEP_MS });
  await sleep(300); // the dialog focuses its button once shown
  const focused = await page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
  return { dialog, focused };
}

/** The entries of the open context menu, "---" for a separator. */
function contextMenuEntries(/** @type {Page} */ page) {
  return page
    .locator('.context-view .action-item')
    .evaluateAll((items) => items.map((e) => (e.classList.contains('separator') || e.querySelector('.separator') ? '---' : (e.querySelector('.action-label')?.textContent ?? '').trim())));
}

/** The text of a notification toast holding `text` (it waits for it). */
async function toastWith(/** @type {Page} */ page, /** @type {string | RegExp} */ text) {
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
  await toast.waitFor({ timeout: STEP_MS });
  return toast;
}

function escapeRegExp(/** @type {string} */ s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Lines of the active editor that carry an extension decoration (Monaco's `ced-` classes). */
function highlightedLines(/** @type {Page} */ page) {
  return page.evaluate(() => {
    const overlays = document.querySelectorAll('.editor-instance .monaco-editor .view-overlays > div');
    return [...overlays].filter((d) => [...d.querySelectorAll('div')].some((c) => /\bced-/.test(c.className))).length;
  });
}

/** The decoration classes of each decorated line of the active editor, top to bottom. */
function highlightClasses(/** @type {Page} */ page) {
  return page.evaluate(() => {
    const overlays = [...document.querySelectorAll('.editor-instance .monaco-editor .view-overlays > div')];
    return overlays
      .map((d) => ({
        top: parseFloat(/** @type {HTMLElement} */ (d).style.top) || 0,
        ced: [...d.querySelectorAll('div')].map((c) => c.className).filter((c) => /\bced-/.test(c)).sort().join(' '),
      }))
      .filter((l) => l.ced)
      .sort((a, b) => a.top - b.top)
      .map((l) => l.ced);
  });
}

module.exports = {
  STEP_MS, sleep, runCommand, openFile, statusItem, statusText, viewRows, paneRows, openContextView, dialogFocus,
  contextMenuEntries, toastWith, highlightedLines, highlightClasses,
};
