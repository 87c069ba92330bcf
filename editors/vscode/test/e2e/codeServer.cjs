// @ts-check
// code-server (VS Code as a web app) for the end-to-end test: installs a .vsix, serves one
// workspace on 127.0.0.1 without auth, keeps all of its state under the given directories, and
// stops everything it started.
'use strict';
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');

class CodeServer {
  /**
   * @param {{ executable: string, userData: string, extensions: string, xdg: string, logFile: string, env?: Record<string, string> }} options
   *   env: more environment for code-server and what it starts (the extension host, the server)
   */
  constructor(options) {
    this.options = options;
    /** @type {import('node:child_process').ChildProcess | undefined} */
    this.child = undefined;
    // code-server writes under $HOME unless the XDG directories point elsewhere.
    this.env = {
      ...process.env,
      XDG_CONFIG_HOME: path.join(options.xdg, 'config'),
      XDG_DATA_HOME: path.join(options.xdg, 'data'),
      XDG_CACHE_HOME: path.join(options.xdg, 'cache'),
      XDG_STATE_HOME: path.join(options.xdg, 'state'),
      ...options.env,
    };
  }

  /** `code-server --install-extension` (`quiet`: its chatter not on stdout, which a bench reports on). */
  install(/** @type {string} */ vsix, quiet = false) {
    const { executable, userData, extensions } = this.options;
    execFileSync(executable, ['--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', vsix], {
      env: this.env,
      // (quiet: its stderr only in the error thrown if it fails)
      stdio: quiet ? ['ignore', 'ignore', 'pipe'] : ['ignore', 'inherit', 'inherit'],
      timeout: 120000,
    });
  }

  /** Starts serving `folder`; resolves to the workbench URL once /healthz answers. */
  async start(/** @type {string} */ folder) {
    const { executable, userData, extensions, logFile } = this.options;
    const port = await freePort();
    const out = fs.openSync(logFile, 'w');
    // detached: its own process group, so stop() ends exactly what it started, including the
    // extension host, its file watcher and the language server.
    this.child = spawn(
      executable,
      [
        '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
        '--disable-workspace-trust', '--disable-getting-started-override', '--user-data-dir', userData,
        '--extensions-dir', extensions, folder,
      ],
      { env: this.env, detached: true, stdio: ['ignore', out, out] },
    );
    fs.closeSync(out);
    for (let i = 0; i < 300; i++) {
      if (await healthy(port)) return { url: `http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}`, pid: this.child.pid };
      if (this.child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`code-server did not come up on port ${port}; see ${logFile}`);
  }

  /**
   * Pids of the processes in code-server's process group whose command line matches, but
   * for a child of one of them: a server starting a worker process forks first, and the
   * child carries the server's command line until it runs its own.
   */
  processes(/** @type {RegExp} */ pattern) {
    const group = this.child?.pid;
    if (!group) return [];
    /** @type {Map<number, number>} */
    const found = new Map(); // pid -> its parent's
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its ')'
        const [, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
        const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
        if (pgrp === group && pattern.test(cmdline)) found.set(Number(entry), ppid);
      } catch {
        /* the process ended meanwhile */
      }
    }
    return [...found].filter(([, parent]) => !found.has(parent)).map(([pid]) => pid);
  }

  /** Ends code-server's whole process group (synchronous: safe in an 'exit' handler). */
  stop() {
    const pid = this.child?.pid;
    this.child = undefined;
    if (!pid) return;
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
  }
}

/** @returns {Promise<number>} */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (a && typeof a === 'object' ? resolve(a.port) : reject(new Error('no free port'))));
    });
  });
}

/** @returns {Promise<boolean>} */
function healthy(/** @type {number} */ port) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
  });
}

module.exports = { CodeServer };
