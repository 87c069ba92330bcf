// The language client: starts `contextls.server.command` over stdio with every workspace
// folder, sends the settings, and turns the server's notifications into events.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  LanguageClient,
  ResponseError,
  RevealOutputChannelOn,
  State,
  TransportKind,
  type LanguageClientOptions,
  type RequestType,
  type ServerOptions,
} from 'vscode-languageclient/node';
import type { DidEvictParams, Status } from './generated/protocol';
import { errorName, expandHome, splitCommand } from './format';
import * as ext from './lsp_ext';
import { explicitValue, serverCommand, serverSettings, type ServerKey } from './settings';

export const SERVER_COMMAND_SETTING = 'contextls.server.command';

/** A failed request, with the server's message and the error's name from the schema. */
export class ServerError extends Error {
  constructor(
    message: string,
    readonly code: number | undefined,
    readonly codeName: string | undefined,
  ) {
    super(message);
  }
}

export class ContextClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<boolean> | undefined;
  private readonly statusEmitter = new vscode.EventEmitter<Status>();
  private readonly evictEmitter = new vscode.EventEmitter<DidEvictParams>();
  private readonly readyEmitter = new vscode.EventEmitter<void>();
  private readonly stoppedEmitter = new vscode.EventEmitter<void>();
  /** Every `contextls/didChangeStatus`, and the status every answer carries. */
  readonly onStatus = this.statusEmitter.event;
  readonly onEvict = this.evictEmitter.event;
  /** The server (re)started and answered `initialize`. */
  readonly onReady = this.readyEmitter.event;
  /** The server stopped, or could not start: what it reported before is no longer true. */
  readonly onStopped = this.stoppedEmitter.event;

  constructor(private readonly output: vscode.LogOutputChannel) {}

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  start(): Promise<boolean> {
    this.starting ??= this.doStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async doStart(): Promise<boolean> {
    const line = serverCommand(vscode.workspace.getConfiguration());
    let words: string[];
    try {
      words = splitCommand(line);
    } catch (e) {
      void this.showCommandError(`contextls: ${String(e instanceof Error ? e.message : e)}`);
      return false;
    }
    const [first, ...args] = words;
    const program = first === undefined ? undefined : expandHome(first, os.homedir());
    if (program === undefined || findExecutable(program) === undefined) {
      this.stoppedEmitter.fire();
      void this.showCommandError(
        `contextls: the server command "${program ?? ''}" was not found. Install contextls ` +
          `(pip install contextls) or set ${SERVER_COMMAND_SETTING} to its full path, ` +
          `e.g. "/path/to/.venv/bin/contextls serve".`,
      );
      return false;
    }
    // The daemon serves one database: `connect` must ask for the one the settings name.
    const storage = vscode.workspace.getConfiguration('contextls').get<string>('storage')?.trim();
    if (args[args.length - 1] === 'connect' && storage) args.push('--storage', expandHome(storage, os.homedir()));
    const serverOptions: ServerOptions = { command: program, args, transport: TransportKind.stdio };
    const clientOptions: LanguageClientOptions = {
      // Every file is synced, so the server reads open buffers (not the disk) and marks
      // items stale when their text changes.
      documentSelector: [{ scheme: 'file' }],
      // a function: a restart after a crash sends the settings as they are then
      initializationOptions: () => this.settings(),
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => this.serverClosed(),
      },
    };
    const client = new LanguageClient('contextls', 'contextls', serverOptions, clientOptions);
    client.onNotification(ext.didChangeStatus, (status) => {
      this.statusEmitter.fire(status);
    });
    client.onNotification(ext.didEvict, (params) => {
      this.evictEmitter.fire(params);
    });
    // A restart after a crash goes through Starting -> Running again: say so, so the status
    // and the view are fetched anew; Stopped means nothing the server said holds any more.
    client.onDidChangeState(({ newState }) => {
      if (newState === State.Running && this.client === client) this.readyEmitter.fire();
      if (newState === State.Stopped) this.stoppedEmitter.fire();
    });
    try {
      await client.start();
    } catch (e) {
      this.output.error(`starting the server failed: ${String(e)}`);
      void this.showCommandError(`contextls: the server "${line}" did not start: ${messageOf(e)}`);
      await client.dispose().catch(() => undefined);
      this.stoppedEmitter.fire();
      return false;
    }
    this.client = client;
    this.readyEmitter.fire();
    return true;
  }

  private readonly crashes: number[] = [];

  /** The server went away: restart it, unless it keeps crashing (3 times in 3 minutes). */
  private serverClosed(): { action: CloseAction; message?: string } {
    const now = Date.now();
    this.crashes.push(now);
    while (this.crashes.length > 0 && (this.crashes[0] ?? now) < now - 180_000) this.crashes.shift();
    if (this.crashes.length <= 3) {
      this.output.warn('the contextls server stopped; starting it again');
      return { action: CloseAction.Restart };
    }
    this.output.error('the contextls server stopped 4 times in 3 minutes; not restarting it');
    return {
      action: CloseAction.DoNotRestart,
      message: 'The contextls server keeps stopping; see the contextls output, then run "Developer: Reload Window".',
    };
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      await client.stop(5000).catch((e: unknown) => {
        this.output.warn(`stopping: ${String(e)}`);
      });
    }
  }

  /** The flat settings object the server reads. */
  settings(): ReturnType<typeof serverSettings> {
    const config = vscode.workspace.getConfiguration('contextls');
    return serverSettings((key: ServerKey) => explicitValue(config.inspect(key)));
  }

  /** Tells the running server about changed settings. */
  async sendSettings(): Promise<void> {
    if (!this.client || !this.running) return;
    await this.client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: { contextls: this.settings() },
    });
  }

  /** Sends a typed request; a failure becomes a ServerError with the server's message. */
  async request<P, R>(type: RequestType<P, R, void>, params: P): Promise<R> {
    if (!this.client || !this.running) {
      if (!(await this.start()) || !this.client) {
        throw new ServerError(`the contextls server is not running (${SERVER_COMMAND_SETTING})`, undefined, undefined);
      }
    }
    try {
      const result = await this.client.sendRequest(type, params);
      const status = (result as { status?: Status } | null)?.status;
      if (status) this.statusEmitter.fire(status);
      return result;
    } catch (e) {
      if (e instanceof ResponseError) throw new ServerError(e.message, e.code, errorName(e.code));
      throw new ServerError(messageOf(e), undefined, undefined);
    }
  }

  private async showCommandError(message: string): Promise<void> {
    const open = 'Open Setting';
    if ((await vscode.window.showErrorMessage(message, open)) === open) {
      await vscode.commands.executeCommand('workbench.action.openSettings', SERVER_COMMAND_SETTING);
    }
  }

  dispose(): void {
    void this.stop();
    this.statusEmitter.dispose();
    this.evictEmitter.dispose();
    this.readyEmitter.dispose();
    this.stoppedEmitter.dispose();
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The program's path if it is an executable file (by path, or on PATH). */
export function findExecutable(program: string): string | undefined {
  const isExecutable = (p: string): boolean => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (program.includes('/') || program.includes(path.sep)) return isExecutable(program) ? program : undefined;
  const exts = process.platform === 'win32' ? (process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const e of exts) {
      const candidate = path.join(dir, program + e);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}
