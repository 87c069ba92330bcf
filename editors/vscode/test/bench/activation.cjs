// @ts-check
// What the extension costs VS Code when it starts, before and after a change: the activation time
// VS Code itself reports (Developer: Show Running Extensions), for the base build activated by its
// view (it started only on first use) and for this build at startup, in a folder whose window was
// made from the command line and in a folder with none; and, for this build, how long after the
// workbench the status item shows the window. Medians of RUNS fresh VS Code profiles each, in one
// run on one machine; a benchmark, not a test (timing goals stay out of the suite).
//
// Usage: node test/bench/activation.cjs BASE.vsix NEW.vsix
// Env:   CODE_SERVER, CONTEXTLS_BIN (as the e2e test), RUNS (default 5), CHROMIUM
'use strict';
const { chromium } = require('playwright-core');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { CodeServer } = require('../e2e/codeServer.cjs');
const { STEP_MS, sleep, runCommand, statusItem, openContextView } = require('../e2e/workbench.cjs');

const [BASE, NEW] = process.argv.slice(2).map((p) => path.resolve(p));
const CODE_SERVER = process.env.CODE_SERVER ?? '';
const CONTEXTLS = process.env.CONTEXTLS_BIN ?? path.resolve(__dirname, '../../../../.venv/bin/contextls');
const RUNS = Number(process.env.RUNS ?? 5);
if (!BASE || !NEW || !CODE_SERVER) throw new Error('usage: CODE_SERVER=... node test/bench/activation.cjs BASE.vsix NEW.vsix');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'contextls-bench-activation-'));
const env = { CONTEXTLS_RUNTIME_DIR: path.join(tmp, 'run'), CONTEXTLS_STATE_DIR: path.join(tmp, 'run'), HOME: path.join(tmp, 'home') };
const DB = path.join(tmp, 'db.sqlite3');
const cliEnv = { ...process.env, ...env };
const WITH = path.join(tmp, 'with-window');
const WITHOUT = path.join(tmp, 'without-window');
for (const dir of [WITH, WITHOUT, env.HOME]) fs.mkdirSync(dir, { recursive: true });
for (const dir of [WITH, WITHOUT]) fs.writeFileSync(path.join(dir, 'notes.md'), '# Notes\n\nwritten from the command line\n');
execFileSync(CONTEXTLS, ['--storage', DB, '--workspace', WITH, 'add', path.join(WITH, 'notes.md')], { env: cliEnv, stdio: 'ignore' });

/** The activation time VS Code shows for contextls in Running Extensions. */
async function reportedActivation(/** @type {import('playwright-core').Page} */ page) {
  await runCommand(page, 'Developer: Show Running Extensions');
  const editor = page.locator('.runtime-extensions-editor');
  await editor.waitFor({ timeout: STEP_MS });
  const end = Date.now() + STEP_MS;
  while (Date.now() < end) {
    const text = await editor.innerText();
    const found = /\ncontextls\n[\s\S]*?(?:Startup )?Activation: (\d+)ms/.exec('\n' + text);
    if (found) return Number(found[1]);
    await sleep(300);
  }
  throw new Error('Running Extensions does not list contextls');
}

/** One fresh VS Code profile: install `vsix`, open `folder`, measure. */
async function once(/** @type {string} */ vsix, /** @type {string} */ folder, /** @type {boolean} */ byView, /** @type {number} */ run) {
  const profile = path.join(tmp, `profile-${path.basename(vsix)}-${path.basename(folder)}-${run}`);
  fs.mkdirSync(path.join(profile, 'user-data', 'User'), { recursive: true });
  fs.writeFileSync(
    path.join(profile, 'user-data', 'User', 'settings.json'),
    JSON.stringify({ 'workbench.startupEditor': 'none', 'telemetry.telemetryLevel': 'off', 'extensions.autoCheckUpdates': false, 'contextls.server.command': `${CONTEXTLS} connect`, 'contextls.storage': DB }),
  );
  const server = new CodeServer({
    executable: CODE_SERVER,
    userData: path.join(profile, 'user-data'),
    extensions: path.join(profile, 'extensions'),
    xdg: path.join(profile, 'xdg'),
    logFile: path.join(profile, 'code-server.log'),
    env,
  });
  server.install(vsix, true);
  const { url } = await server.start(folder);
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1400, height: 850 } })).newPage();
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
    const loaded = Date.now();
    let statusMs;
    if (byView) {
      await sleep(3000);
      await openContextView(page);
      await statusItem(page).waitFor({ timeout: STEP_MS });
    } else if (folder === WITH) {
      await page.locator('.statusbar-item:has(.codicon-library)', { hasText: '1/50 items' }).first().waitFor({ timeout: STEP_MS });
      statusMs = Date.now() - loaded;
    } else {
      await sleep(8000);
    }
    const activation = await reportedActivation(page);
    return { activation, statusMs, statusShown: (await statusItem(page).count()) > 0 };
  } finally {
    await browser.close();
    server.stop();
  }
}

const median = (/** @type {number[]} */ xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? (s[(s.length - 1) / 2] ?? NaN) : ((s[s.length / 2 - 1] ?? 0) + (s[s.length / 2] ?? 0)) / 2;
};

async function main() {
  const cases = [
    { name: 'base, activated by its view (a folder with a window)', vsix: BASE, folder: WITH, byView: true },
    { name: 'this build at startup, a folder with a window', vsix: NEW, folder: WITH, byView: false },
    { name: 'this build at startup, a folder without a window', vsix: NEW, folder: WITHOUT, byView: false },
  ];
  /** @type {Record<string, {activation: number[], status: number[], shown: boolean[]}>} */
  const results = {};
  for (let run = 0; run < RUNS; run++) {
    for (const c of cases) {
      const r = await once(c.vsix, c.folder, c.byView, run);
      const into = (results[c.name] ??= { activation: [], status: [], shown: [] });
      into.activation.push(r.activation);
      if (r.statusMs !== undefined) into.status.push(r.statusMs);
      into.shown.push(r.statusShown);
      console.error(`[bench] run ${run + 1}/${RUNS} ${c.name}: activation ${r.activation} ms${r.statusMs !== undefined ? `, status after ${r.statusMs} ms` : ''}`);
    }
  }
  const base = median(results[cases[0]?.name ?? '']?.activation ?? []);
  console.log(`activation as VS Code reports it, median of ${RUNS} fresh profiles (load: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, ${os.cpus().length} cores)`);
  for (const c of cases) {
    const r = results[c.name];
    if (!r) continue;
    const m = median(r.activation);
    const status = r.status.length ? `; status shown ${median(r.status)} ms after the workbench` : '';
    console.log(`  ${c.name}: ${m} ms (${(m / base).toFixed(2)}x the base) [${r.activation.join(', ')}]${status}; status item ${r.shown.every(Boolean) ? 'shown' : r.shown.some(Boolean) ? 'sometimes shown' : 'not shown'}`);
  }
  execFileSync(CONTEXTLS, ['--storage', DB, 'daemon', 'stop'], { env: cliEnv, stdio: 'ignore' });
  fs.rmSync(tmp, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
