// The language client: finds and starts contextls over stdio with every workspace folder, sends
// the settings, turns the server's notifications into events, and keeps the server's log in the
// output channel.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  ResponseError,
  RevealOutputChannelOn,
  ShowMessageNotification,
  State,
  TransportKind,
  type ClientCapabilities,
  type CloseHandlerResult,
  type FeatureState,
  type LanguageClientOptions,
  type RequestType,
  type ServerOptions,
  type ShowMessageParams,
  type StaticFeature,
} from 'vscode-languageclient/node';
import type { DidEvictParams, DidWarnParams, ServerInfo, Status } from './generated/protocol';
import { errorName, expandHome, splitCommand } from './format';
import { locateProgram, searchedPlaces, type Located } from './locate';
import * as ext from './lsp_ext';
import { LogTail } from './serverLog';
import { explicitValue, serverCommand, serverSettings, type ServerKey } from './settings';

export const SERVER_COMMAND_SETTING = 'contextls.server.command';

/** A failed request, with the server's message and the error's name from the schema. */
export class ServerError extends Error {
  constructor(
    message: string,
    readonly code: number | undefined,
    readonly codeName: string | undefined,
    /** The error's data (the schema's x-errorData: NoRoomData, a planned AddFilesResult). */
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** No server answered: starting one failed, and that failure was already shown to the person. */
export class NotRunning extends ServerError {}

/** How a person installs contextls, which is not on PyPI: from its repository. */
export const INSTALL_ADVICE =
  'contextls is installed from its repository: "pipx install /path/to/contextls" or ' +
  '"uv tool install /path/to/contextls" (add [semantic,mcp] for the extras), or use the ' +
  "repository's own .venv by setting " + '"contextls.server.command" to "/path/to/contextls/.venv/bin/contextls connect".';

/** Tells the server this client takes warnings as data (`contextls/didWarn`): it words them itself. */
class WarningsAsData implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    capabilities.experimental = { ...experimental, contextls: { didWarn: true } };
  }
  initialize(): void {}
  getState(): FeatureState {
    return { kind: 'static' };
  }
  clear(): void {}
}

export class ContextClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<boolean> | undefined;
  private readonly statusEmitter = new vscode.EventEmitter<Status>();
  private readonly evictEmitter = new vscode.EventEmitter<DidEvictParams>();
  private readonly readyEmitter = new vscode.EventEmitter<void>();
  private readonly stoppedEmitter = new vscode.EventEmitter<void>();
  private readonly usedEmitter = new vscode.EventEmitter<void>();
  private readonly messageEmitter = new vscode.EventEmitter<ShowMessageParams>();
  private readonly warningEmitter = new vscode.EventEmitter<DidWarnParams>();
  /** What the server tells the person in words (window/showMessage): ServerMessages shows it. */
  readonly onMessage = this.messageEmitter.event;
  /** What the server tells the person as data (contextls/didWarn): ServerMessages words it. */
  readonly onWarning = this.warningEmitter.event;
  /** Every `contextls/didChangeStatus`, and the status every answer carries. */
  readonly onStatus = this.statusEmitter.event;
  readonly onEvict = this.evictEmitter.event;
  /** The server (re)started and answered `initialize`. */
  readonly onReady = this.readyEmitter.event;
  /** The server stopped, or could not start: what it reported before is no longer true. */
  readonly onStopped = this.stoppedEmitter.event;
  /** Something a person did needs the server (a command, a view, a document): from then on the
   * extension shows itself (its status item) in this VS Code window. */
  readonly onUsed = this.usedEmitter.event;
  /** The last start failed (not found, or it did not answer): the person has been told. */
  startFailed = false;
  /** A person needed the server at least once in this VS Code window. */
  used = false;

  constructor(private readonly output: vscode.LogOutputChannel) {}

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  /**
   * Starts the server (or joins a start under way). `quiet`: the extension looks on its own at
   * startup whether this folder has a window; that is not a person's use, and says nothing.
   */
  start(quiet = false): Promise<boolean> {
    if (!quiet && !this.used) {
      this.used = true;
      this.usedEmitter.fire();
    }
    // The client is starting its server again after a crash: wait for it, never start a second.
    const current = this.client;
    if (current && this.restarting) return this.untilRunning(current);
    if (!this.starting) {
      void vscode.commands.executeCommand('setContext', 'contextls.starting', true);
      // doStart runs once `starting` is set: it fires events whose listeners may call start()
      // again (a contextls: document asks for its text), which must join this start.
      this.starting = Promise.resolve()
        .then(() => this.doStart())
        .then((started) => {
          this.startFailed = !started;
          return started;
        })
        .finally(() => {
          this.starting = undefined;
          void vscode.commands.executeCommand('setContext', 'contextls.starting', false);
        });
    }
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
    const wanted = first === undefined ? undefined : expandHome(first, os.homedir());
    const located = wanted === undefined ? undefined : locate(wanted);
    if (wanted === undefined || located === undefined) {
      this.located = undefined;
      this.setRunning(false);
      this.stoppedEmitter.fire();
      const where = wanted?.includes('/') ? '' : ` (looked on ${searchedPlaces(process.env, os.homedir())})`;
      this.output.error(`the server command "${wanted ?? ''}" was not found${where}`);
      void this.showNotFound(`contextls: "${wanted ?? ''}" was not found${where}. ${INSTALL_ADVICE}`);
      return false;
    }
    if (located.via === 'install-dir') {
      this.output.info(`found ${located.path} (the editor's PATH lacks its directory)`);
    }
    const program = located.path;
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
      // `handled`: the library would show its own words ("Client contextls: connection to server
      // is erroring…") in a notification; the output and the status bar say ours.
      errorHandler: {
        error: (error) => {
          this.output.warn(`the connection to the server failed: ${error.message}`);
          return { action: ErrorAction.Continue, handled: true };
        },
        closed: () => this.serverClosed(),
      },
    };
    const client = new LanguageClient('contextls', 'contextls', serverOptions, clientOptions);
    client.registerFeature(new WarningsAsData());
    client.onNotification(ext.didChangeStatus, (status) => {
      this.statusEmitter.fire(status);
    });
    client.onNotification(ext.didEvict, (params) => {
      this.evictEmitter.fire(params);
    });
    client.onNotification(ShowMessageNotification.type, (params) => {
      this.messageEmitter.fire(params);
    });
    client.onNotification(ext.didWarn, (params) => {
      this.warningEmitter.fire(params);
    });
    // A restart after a crash goes through Starting -> Running again: say so, so the status
    // and the view are fetched anew; Stopped means nothing the server said holds any more.
    client.onDidChangeState(({ newState }) => {
      if (newState === State.Running && this.client === client) {
        if (this.restarting) vscode.window.setStatusBarMessage('contextls: the server is back; the window is as it was', 5000);
        this.restarting = false;
        this.setRunning(true);
        this.readyEmitter.fire();
      }
      if (newState === State.Stopped) {
        this.setRunning(false);
        this.stoppedEmitter.fire();
      }
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
    const previous = this.located?.program;
    this.client = client;
    this.located = { program, words: [program, ...args] };
    this.setRunning(true);
    this.readyEmitter.fire();
    if (previous !== program) this.locatedEmitter.fire();
    void this.describeServer(client, [program, ...args].join(' '));
    return true;
  }

  /** True once `client` runs again; false if it has not within 20 s. */
  private untilRunning(client: LanguageClient): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (running: boolean): void => {
        clearTimeout(timer);
        subscription.dispose();
        resolve(running);
      };
      const timer = setTimeout(() => {
        done(this.running);
      }, 20_000);
      const subscription = client.onDidChangeState(({ newState }) => {
        if (newState === State.Running) done(true);
      });
    });
  }

  /** Says in the output which server answered, and follows its log there. */
  private async describeServer(client: LanguageClient, line: string): Promise<void> {
    try {
      const info = await client.sendRequest(ext.serverInfo, {});
      this.info = info;
      const daemon = info.daemon ? `the shared daemon (pid ${info.pid})` : `a server of this window (pid ${info.pid})`;
      this.output.info(`${line}: contextls ${info.version}, ${daemon}, database ${info.storage}`);
      this.logTail?.dispose();
      this.logTail = info.log ? new LogTail(info.log, (text) => {
            this.output.appendLine(text);
          }) : undefined;
      if (!info.log && info.daemon) this.output.info('the daemon does not say where its log is (an older contextls)');
    } catch (e) {
      this.output.warn(`contextls/serverInfo: ${messageOf(e)}`);
    }
  }

  private setRunning(running: boolean): void {
    void vscode.commands.executeCommand('setContext', 'contextls.running', running);
  }

  private readonly crashes: number[] = [];
  private logTail: LogTail | undefined;
  /** The language client is starting the server again after a crash. */
  private restarting = false;
  /** What the running server said of itself (version, daemon, its log, semantic search). */
  info: ServerInfo | undefined;
  /** The program the server was started with, found on PATH or in an install dir, and its words. */
  located: { program: string; words: string[] } | undefined;
  private readonly locatedEmitter = new vscode.EventEmitter<void>();
  /** The server runs from another program than before (found where it was missing, say). */
  readonly onLocated = this.locatedEmitter.event;

  /** The server went away: restart it, unless it keeps crashing (3 times in 3 minutes). */
  private serverClosed(): CloseHandlerResult {
    const now = Date.now();
    this.crashes.push(now);
    while (this.crashes.length > 0 && (this.crashes[0] ?? now) < now - 180_000) this.crashes.shift();
    if (this.crashes.length <= 3) {
      this.output.warn('the contextls server stopped; starting it again');
      vscode.window.setStatusBarMessage('contextls: the server stopped (a `contextls daemon stop`, a new version, or a crash); starting it again…', 10_000);
      this.restarting = true;
      return { action: CloseAction.Restart, handled: true };
    }
    this.restarting = false;
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
    this.restarting = false;
    this.logTail?.dispose();
    this.logTail = undefined;
    this.info = undefined;
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

  /** Sends a typed request; a failure becomes a ServerError with the server's message. */
  async request<P, R>(type: RequestType<P, R, void>, params: P): Promise<R> {
    if (!this.client || !this.running) {
      if (!(await this.start()) || !this.client) {
        throw new NotRunning(`the contextls server is not running (${SERVER_COMMAND_SETTING})`, undefined, undefined);
      }
    }
    try {
      const result = await this.client.sendRequest(type, params);
      const status = (result as { status?: Status } | null)?.status;
      if (status) this.statusEmitter.fire(status);
      return result;
    } catch (e) {
      if (e instanceof ResponseError) throw new ServerError(e.message, e.code, errorName(e.code), e.data);
      throw new ServerError(messageOf(e), undefined, undefined);
    }
  }

  private async showCommandError(message: string): Promise<void> {
    const open = 'Open Setting';
    if ((await vscode.window.showErrorMessage(message, open)) === open) {
      await vscode.commands.executeCommand('workbench.action.openSettings', SERVER_COMMAND_SETTING);
    }
  }

  private async showNotFound(message: string): Promise<void> {
    const install = 'How to Install';
    const settings = 'Open Settings';
    const output = 'Show Output';
    const answer = await vscode.window.showErrorMessage(message, install, settings, output);
    if (answer === install) await vscode.commands.executeCommand('contextls.howToInstall');
    else if (answer === settings) await vscode.commands.executeCommand('workbench.action.openSettings', SERVER_COMMAND_SETTING);
    else if (answer === output) this.output.show(true);
  }

  dispose(): void {
    void this.stop();
    this.statusEmitter.dispose();
    this.evictEmitter.dispose();
    this.readyEmitter.dispose();
    this.stoppedEmitter.dispose();
    this.usedEmitter.dispose();
    this.messageEmitter.dispose();
    this.warningEmitter.dispose();
    this.locatedEmitter.dispose();
  }
}

/** Where a program named in a setting is (on PATH, in pipx's or uv's directory), if anywhere. */
export function locate(program: string): Located | undefined {
  return locateProgram(program, process.env, os.homedir(), isExecutable);
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** An executable file (not a directory). */
function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
