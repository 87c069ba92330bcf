// @ts-check
// End-to-end test of the packaged extension in a real VS Code (code-server) against the real
// server, driven from headless Chromium by playwright-core. Nothing is mocked: the .vsix is
// installed into code-server, the extension spawns `contextls serve` (and, on a first run, finds
// `contextls connect` in ~/.local/bin), and the test reads the server's window over its own
// connection (`contextls --json ls`) to compare with what is drawn. A small test-only extension
// (probe/) calls the language-model tools through vscode.lm.invokeTool, as Copilot's chat does.
//
// Usage: node test/e2e/e2e.cjs
// Env:   CODE_SERVER    code-server executable (scripts/vscode-e2e-env.sh prints it)
//        CONTEXTLS_BIN  the contextls executable (default: <repo>/.venv/bin/contextls)
//        VSIX           the package to install (default: dist/contextls.vsix)
//        ARTIFACTS      where screenshots and logs go (default: test-artifacts/e2e)
//        CHROMIUM       browser executable (default: /usr/bin/chromium)
//        ONLY           a regular expression: run only the scenarios it matches (and the first)
// Prints `e2e: N passed, N failed` and exits non-zero on any failure.
'use strict';
const { chromium } = require('playwright-core');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { CodeServer } = require('./codeServer.cjs');
const { statusItem } = require('./workbench.cjs');
const { EXT_DIR, tmp, WS, HOME, USER_DATA, CONTEXTLS_ENV, stopCliDaemon } = require('./fixture.cjs');
const { windowScenarios } = require('./scenariosWindow.cjs');
const { personScenarios } = require('./scenariosPerson.cjs');

const CODE_SERVER = required('CODE_SERVER');
const VSIX = path.resolve(process.env.VSIX || path.join(EXT_DIR, 'dist/contextls.vsix'));
const ARTIFACTS = path.resolve(process.env.ARTIFACTS || path.join(EXT_DIR, 'test-artifacts/e2e'));
const DEADLINE_MS = 9 * 60 * 1000; // the whole run, whatever happens
const PROBE_IN = path.join(tmp, 'probe-in.json');
const PROBE_OUT = path.join(tmp, 'probe-out.json');

const t0 = Date.now();
const log = (/** @type {unknown[]} */ ...a) => console.log(`[e2e ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

function required(/** @type {string} */ name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (see the header of ${__filename})`);
  return v;
}

fs.mkdirSync(ARTIFACTS, { recursive: true });
for (const f of fs.readdirSync(ARTIFACTS)) if (f.endsWith('.png')) fs.rmSync(path.join(ARTIFACTS, f));

/** PATH without any directory that holds a `contextls`: a first run must find it on its own. */
function pathWithoutContextls() {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir && !fs.existsSync(path.join(dir, 'contextls')))
    .join(path.delimiter);
}

const codeServer = new CodeServer({
  executable: CODE_SERVER,
  userData: USER_DATA,
  extensions: path.join(tmp, 'extensions'),
  xdg: path.join(tmp, 'xdg'),
  logFile: path.join(ARTIFACTS, 'code-server.log'),
  env: {
    ...CONTEXTLS_ENV,
    HOME,
    PATH: pathWithoutContextls(),
    CONTEXTLS_PROBE_IN: PROBE_IN,
    CONTEXTLS_PROBE_OUT: PROBE_OUT,
  },
});
const stopCodeServer = () => codeServer.stop();

/** The test-only probe extension, packaged like any other. */
function packageProbe() {
  const out = path.join(tmp, 'contextls-e2e-probe.vsix');
  execFileSync(
    path.join(EXT_DIR, 'node_modules/.bin/vsce'),
    ['package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '-o', out],
    { cwd: path.join(__dirname, 'probe'), stdio: ['ignore', 'ignore', 'inherit'], timeout: 60000 },
  );
  return out;
}

const ORDER = [
  '0-activates-on-first-use',
  '1-add-selection',
  '2-overflow-evict-restore',
  '3-settings-follow',
  '4-show-context-one-read-only-live-document',
  '5-copy-context-matches-server',
  '5b-multi-cursor-and-stale',
  '5c-a-change-from-the-cli-shows-unasked',
  '6-add-text',
  '7-pin-unpin-remove-in-view',
  '7b-row-menu-copy-and-delete-key',
  '8-archive-search-view',
  '9-add-symbol',
  '9b-add-symbol-without-a-symbol-provider',
  '9c-unsaved-buffer',
  '9d-a-merged-add-says-merged',
  '10-add-problems',
  '11-highlights',
  '12-clear',
  '13-server-error-shown',
  '14-explorer-folder-within-the-budget',
  '14b-folder-over-the-budget',
  '14c-env-from-the-explorer-asks',
  '14d-reset-in-the-settings-ui',
  '14e-set-task-and-window-settings',
  '15-terminal-selection',
  '15b-server-crash-restarts',
  '15c-language-model-tools',
  '15d-show-context-after-a-reload',
  '15e-settings-ui-typing',
  '15f-settings-ui-pause-mid-number',
  '19-definition-by-name-follows-its-name',
  '20-outline-whole-and-a-map',
  '21-the-model-named-and-chosen',
  '17-first-run-without-contextls-on-path',
  '18-startup-status-for-a-folder-with-a-window',
  '22-two-editors-one-unsaved-file',
];

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
    const all = {
      ...Object.fromEntries(windowScenarios({ artifacts: ARTIFACTS, codeServer }).map((s) => [s.name, s])),
      ...personScenarios({ artifacts: ARTIFACTS, codeServer, probeIn: PROBE_IN, probeOut: PROBE_OUT }),
    };
    const unknown = [...ORDER.filter((n) => !all[n]), ...Object.keys(all).filter((n) => !ORDER.includes(n))];
    if (unknown.length) throw new Error(`scenarios out of ORDER or missing: ${unknown.join(', ')}`);
    const only = process.env.ONLY ? new RegExp(process.env.ONLY) : undefined;
    log('installing', VSIX, 'and the probe');
    codeServer.install(VSIX);
    codeServer.install(packageProbe());
    const { url, pid } = await codeServer.start(WS);
    log(`code-server pid ${String(pid)}: ${url}`);
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
    log('workbench loaded');
    for (const [i, name] of ORDER.entries()) {
      if (only && i > 0 && !only.test(name)) continue;
      try {
        await all[name].run(page);
        passed++;
        log(`PASS ${name}`, `(status: ${((await statusItem(page).textContent().catch(() => '')) ?? '').trim()})`);
      } catch (e) {
        failed++;
        log(`FAIL ${name}: ${e instanceof Error ? e.message : String(e)}`);
      }
      await page.waitForTimeout(300);
      await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) }).catch(() => undefined);
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
