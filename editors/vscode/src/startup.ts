// Whether VS Code's opening a folder should start contextls: only where the folder has a window
// (made here, from the command line, Emacs or an agent), never merely because a window opened.
// What it looks at costs little, in this order: a `.contextls` marker in a folder; folders this
// extension saw a window in before (kept across sessions); and, when the server is the shared
// daemon, the daemon itself if it runs: `contextls daemon status` (~70 ms of another process, which
// starts nothing) says whether it does, and then the window's status says whether there is one.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { locate, type ContextClient } from './client';
import { expandHome, splitCommand } from './format';
import type { Status } from './generated/protocol';
import * as ext from './lsp_ext';
import { serverCommand } from './settings';
import { daemonRuns, daemonStatusCommand, hasWindow } from './startupRules';

/** globalState key: folder URIs this extension saw a window in. */
const SEEN_KEY = 'contextls.windowsSeen';
/** The most folders remembered (the oldest are forgotten first). */
const SEEN_MOST = 500;

export class Startup {
  constructor(
    private readonly client: ContextClient,
    private readonly state: vscode.Memento,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** Takes note of a folder whose status shows a window, for the next time VS Code opens it. */
  remember(status: Status): void {
    if (!hasWindow(status)) return;
    const seen = this.state.get<string[]>(SEEN_KEY, []);
    if (seen.includes(status.workspace)) return;
    void this.state.update(SEEN_KEY, [...seen, status.workspace].slice(-SEEN_MOST));
  }

  /** Starts the server if a folder of this VS Code window has a window; says nothing otherwise. */
  async run(): Promise<void> {
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (folders.length === 0) return;
    const seen = new Set(this.state.get<string[]>(SEEN_KEY, []));
    const known = folders.find((f) => seen.has(f.uri.toString()) || hasMarker(f.uri));
    if (known) {
      this.log.info(`${known.name} has a contextls window: starting`);
      await this.client.start(true);
      return;
    }
    if (!(await this.daemonRuns())) return;
    if (!(await this.client.start(true))) return;
    const windows = await Promise.all(
      folders.map((f) => this.client.request(ext.status, { workspace: f.uri.toString() }).then(hasWindow, () => false)),
    );
    if (windows.some(Boolean) || this.client.used) return;
    this.log.info('no folder of this window has a contextls window: the server waits until contextls is used');
    await this.client.stop();
  }

  private async daemonRuns(): Promise<boolean> {
    const config = vscode.workspace.getConfiguration();
    let words: string[];
    try {
      words = splitCommand(serverCommand(config));
    } catch {
      return false;
    }
    const [first] = words;
    const program = first === undefined ? undefined : locate(expandHome(first, os.homedir()))?.path;
    const storage = config.get<string>('contextls.storage')?.trim();
    const command = program ? daemonStatusCommand([program, ...words.slice(1)], storage ? expandHome(storage, os.homedir()) : undefined) : undefined;
    if (!command) {
      this.log.info(program ? 'the server is not the shared daemon: contextls starts when it is used' : `"${first ?? ''}" was not found: contextls starts when it is used`);
      return false;
    }
    const [file, ...args] = command;
    if (file === undefined) return false;
    return new Promise((resolve) => {
      execFile(file, args, { timeout: 10_000, cwd: os.homedir() }, (error, stdout, stderr) => {
        const runs = daemonRuns(stdout);
        if (!runs) this.log.info(`the shared daemon does not run (${[file, ...args].join(' ')}: ${error ? (stderr.trim() || error.message) : 'not running'}): contextls starts when it is used`);
        resolve(runs);
      });
    });
  }
}

function hasMarker(folder: vscode.Uri): boolean {
  return folder.scheme === 'file' && fs.existsSync(path.join(folder.fsPath, '.contextls'));
}
