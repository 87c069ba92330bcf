// @ts-check
// The end-to-end test's world: a workspace of files with non-ASCII names and text, the user's
// settings, a HOME of its own (where a first run looks for contextls), and the server's view of
// the window read over a connection of the test's own (`contextls --json ...`).
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { STEP_MS, sleep } = require('./workbench.cjs');

const EXT_DIR = path.resolve(__dirname, '../..');
const REPO = path.resolve(EXT_DIR, '../..');
const CONTEXTLS = process.env.CONTEXTLS_BIN || path.join(REPO, '.venv/bin/contextls');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'contextls-vscode-e2e-'));
const WS = path.join(tmp, 'wörkspace');
const DB = path.join(tmp, 'state', 'contextls.sqlite3');
const HOME = path.join(tmp, 'home');
const LOCAL_BIN = path.join(HOME, '.local', 'bin');
const USER_DATA = path.join(tmp, 'user-data');
const WS_SETTINGS = path.join(WS, '.vscode', 'settings.json');
for (const d of [WS, path.dirname(DB), LOCAL_BIN, path.join(USER_DATA, 'User'), path.join(WS, '.vscode')]) {
  fs.mkdirSync(d, { recursive: true });
}

/** Writes a file of the workspace (parents too). */
function write(/** @type {string} */ rel, /** @type {string | Buffer} */ content) {
  fs.mkdirSync(path.dirname(path.join(WS, rel)), { recursive: true });
  fs.writeFileSync(path.join(WS, rel), content);
}

// A non-ASCII file name and text, with a character outside the BMP (two UTF-16 code units).
const UNI_NAME = 'ünï.py';
const UNI_LINES = ['def grüße(name):', '    return f"Grüß dich, {name}!"', '', 'RÉSUMÉ = "😀 ünïcode"', ''];
write(UNI_NAME, UNI_LINES.join('\n').normalize('NFC'));
const BIG_NAME = 'big.txt';
write(BIG_NAME, Array.from({ length: 30 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join('\n') + '\n');
const MD_NAME = 'nötizen.md';
write(MD_NAME, '# Anfang\n\nerster Absatz\n\n## Größe\n\nzweiter Absatz 😀\n');
const JSON_NAME = 'kaputt.json';
write(JSON_NAME, '{\n  "a": 1,,\n  "b": 2\n}\n');
const MULTI_NAME = 'mehrfach.txt';
write(MULTI_NAME, 'eins\n\nzwei\n\ndrei\n');
// A folder for the Explorer: two text files and a binary one (skipped when adding the folder).
const SUB = 'ördner';
write(`${SUB}/a.txt`, 'erste Datei\n');
write(`${SUB}/b.py`, 'print("zweite")\n');
write(`${SUB}/c.bin`, Buffer.from([0, 1, 2, 0, 255, 0]));
// Python without a symbol provider (stock VS Code has none): Add Symbol finds the block.
const PY_NAME = 'wrapper.py';
write(
  PY_NAME,
  [
    'class Wrapper:',
    '    width = 70',
    '',
    '    def wrap(self, text):',
    '        words = text.split()',
    '',
    '        return [w for w in words if w]',
    '',
    '',
    'def fill(text):',
    '    return "\\n".join(Wrapper().wrap(text))',
    '',
  ].join('\n'),
);
/** Python of `functions` small functions: a few hundred tokens per file. */
const pythonModule = (/** @type {string} */ name, /** @type {number} */ functions) =>
  Array.from(
    { length: functions },
    (_, i) => `def ${name}_${i}(value, limit=${i + 10}):\n    """Return how ${name} ${i} treats the value."""\n    return [v for v in value if v < limit]\n`,
  ).join('\n');
// A folder that fits the budget only if the window makes room, and one that never fits (each of
// its files would, alone).
const LIB = 'lib';
for (const name of ['alpha', 'beta', 'gamma']) write(`${LIB}/${name}.py`, pythonModule(name, 12));
const LIB2 = 'lib2';
for (const name of ['delta', 'epsilon', 'zeta']) write(`${LIB2}/${name}.py`, pythonModule(name, 12));
const HUGE = 'huge';
for (const name of ['one', 'two', 'three', 'four', 'five', 'six']) write(`${HUGE}/${name}.py`, pythonModule(name, 12));
write(`${HUGE}/blob.bin`, Buffer.from([0, 159, 146, 150, 0, 1]));
// A file that usually holds credentials, with text that looks like two kinds of them.
const ENV_NAME = '.env';
write(ENV_NAME, 'AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nDB_PASSWORD=hunter2-not-a-real-one\n');
// Folders opened after the main one: one whose window is made from the command line, one never used.
const OTHER = path.join(tmp, 'andere');
const UNUSED = path.join(tmp, 'unbenutzt');
for (const folder of [OTHER, UNUSED]) {
  fs.mkdirSync(path.join(folder, '.vscode'), { recursive: true });
  fs.writeFileSync(path.join(folder, 'notiz.md'), '# Notiz\n\nvom Terminal angelegt\n');
  // the shared daemon, found in ~/.local/bin as a first run finds it
  fs.writeFileSync(path.join(folder, '.vscode', 'settings.json'), JSON.stringify({ 'contextls.server.command': '' }));
}

function writeFolderSettings(/** @type {Record<string, unknown>} */ settings) {
  fs.writeFileSync(WS_SETTINGS, JSON.stringify(settings, null, 2) + '\n');
}
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
      'contextls.server.command': `${CONTEXTLS} serve`,
      'contextls.storage': DB,
    },
    null,
    2,
  ),
);

/** The CLI's daemon (and a `contextls connect` of the extension) lives in the test's own dirs. */
const CONTEXTLS_ENV = {
  CONTEXTLS_CONFIG_DIR: path.join(tmp, 'cli-config'),
  CONTEXTLS_RUNTIME_DIR: path.join(tmp, 'run'),
  CONTEXTLS_STATE_DIR: path.join(tmp, 'run'),
};
const CLI_ENV = { ...process.env, ...CONTEXTLS_ENV };

/** The server's view of the window, over the test's own connection (not the extension's). */
function cli(/** @type {string[]} */ ...args) {
  return cliIn(WS, ...args);
}
/** The archive's hits for `query` (none is an answer too: the command exits 1, as grep does). */
function searchArchive(/** @type {string} */ query) {
  try {
    return cli('search', query).hits;
  } catch (e) {
    const failed = /** @type {{ status?: number, stdout?: string }} */ (e);
    if (failed.status === 1 && failed.stdout) return JSON.parse(failed.stdout).hits ?? [];
    throw e;
  }
}
/** The same, for the window of another folder. */
function cliIn(/** @type {string} */ folder, /** @type {string[]} */ ...args) {
  const out = execFileSync(CONTEXTLS, ['--json', '--storage', DB, '--workspace', folder, ...args], { encoding: 'utf8', timeout: 30000, env: CLI_ENV, cwd: folder });
  return JSON.parse(out);
}
function stopCliDaemon() {
  try {
    execFileSync(CONTEXTLS, ['--storage', DB, 'daemon', 'stop'], { env: CLI_ENV, timeout: 30000 });
  } catch {
    // not running: nothing to stop
  }
}
/** What adding `targets` would put in the window, in tokens as rendered (the server's plan). */
function tokensOf(/** @type {string[]} */ ...targets) {
  return cli('add', ...targets, '--dry-run').tokens;
}

/** 950 -> "950", 3200 -> "3.2k": what the status bar shows. */
function count(/** @type {number} */ n) {
  if (n < 1000) return String(n);
  const k = n / 1000;
  return (k >= 100 ? String(Math.round(k)) : String(Math.round(k * 10) / 10)) + 'k';
}
/** What the status bar must say for a server status (the documented format, with the model). */
function expectedStatus(/** @type {any} */ s) {
  return `${s.countExact === false ? '~' : ''}${count(s.tokens)}/${count(s.budget || s.maxTokens)} ${s.model || s.encoding} tokens · ${s.itemCount}/${s.maxItems} items`;
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

/** Polls until `read()` satisfies `ok`; returns the last value read. */
async function until(/** @type {() => any} */ read, /** @type {(v: any) => boolean} */ ok, /** @type {string} */ what) {
  const end = Date.now() + STEP_MS;
  let value;
  while (Date.now() < end) {
    value = await read();
    if (ok(value)) return value;
    await sleep(250);
  }
  throw new Error(`${what}: got ${JSON.stringify(value)}`);
}

function assertEqual(/** @type {unknown} */ actual, /** @type {unknown} */ expected, /** @type {string} */ what) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}

function range(/** @type {number} */ a, /** @type {number} */ b) {
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}

module.exports = {
  EXT_DIR, REPO, CONTEXTLS, tmp, WS, DB, HOME, LOCAL_BIN, USER_DATA, CONTEXTLS_ENV,
  UNI_NAME, UNI_LINES, BIG_NAME, MD_NAME, JSON_NAME, MULTI_NAME, SUB, PY_NAME, LIB, LIB2, HUGE, ENV_NAME, OTHER, UNUSED,
  writeFolderSettings, cli, cliIn, searchArchive, stopCliDaemon, tokensOf, count, expectedStatus, serverWindow, until, assertEqual, range,
};
