// The window's items as the extension last saw them, for the items view and the highlights.
// It re-lists only when a status push says the window changed (a new revision): never polls.
import * as vscode from 'vscode';
import type { ContextItem, Status } from './generated/protocol';
import type { ContextClient } from './client';
import * as ext from './lsp_ext';

/** The workspace folder commands act on: the active editor's, else the first one. */
export function currentFolder(): vscode.WorkspaceFolder | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  const folder = doc ? vscode.workspace.getWorkspaceFolder(doc.uri) : undefined;
  return folder ?? vscode.workspace.workspaceFolders?.[0];
}

/** The same folder URI, however it was spelt (the server echoes what the client sent). */
export function sameFolder(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return vscode.Uri.parse(a).fsPath === vscode.Uri.parse(b).fsPath;
  } catch {
    return false;
  }
}

export class WindowModel implements vscode.Disposable {
  private readonly statuses = new Map<string, Status>();
  private itemsValue: ContextItem[] = [];
  private listedRevision: string | undefined;
  private listing: Promise<void> | undefined;
  private again = false;
  private readonly changedEmitter = new vscode.EventEmitter<void>();
  private readonly statusEmitter = new vscode.EventEmitter<Status | undefined>();
  private readonly disposables: vscode.Disposable[] = [];
  /** The items of the current folder changed. */
  readonly onDidChangeItems = this.changedEmitter.event;
  /** The status of the current folder changed (undefined: not known yet). */
  readonly onDidChangeStatus = this.statusEmitter.event;

  constructor(private readonly client: ContextClient) {
    this.disposables.push(
      // The welcome views, menus and palette read these (package.json `when` clauses).
      this.statusEmitter.event((s) => {
        const set = (key: string, value: boolean): void => void vscode.commands.executeCommand('setContext', key, value);
        set('contextls.empty', s !== undefined && s.itemCount === 0);
        set('contextls.hasItems', s !== undefined && s.itemCount > 0);
        set('contextls.hasStale', s !== undefined && s.staleCount > 0);
        set('contextls.hasArchived', s !== undefined && s.archivedCount > 0);
      }),
      client.onStatus((s) => {
        this.statuses.set(s.workspace, s);
        if (this.isCurrent(s.workspace)) {
          this.statusEmitter.fire(s);
          this.refresh();
        }
      }),
      client.onStopped(() => {
        this.statuses.clear();
        this.listedRevision = undefined;
        this.itemsValue = [];
        this.statusEmitter.fire(undefined);
        this.changedEmitter.fire();
      }),
      client.onReady(() => {
        this.listedRevision = undefined;
        void this.fetchStatus();
      }),
      vscode.window.onDidChangeActiveTextEditor(() => {
        // Another folder of a multi-root window may not have reported yet: ask once.
        if (this.status === undefined) void this.fetchStatus();
        this.statusEmitter.fire(this.status);
        this.refresh();
      }),
    );
  }

  get items(): readonly ContextItem[] {
    return this.itemsValue;
  }

  get folderUri(): string | undefined {
    return currentFolder()?.uri.toString();
  }

  get status(): Status | undefined {
    const folder = this.folderUri;
    if (folder === undefined) return undefined;
    for (const [ws, s] of this.statuses) if (sameFolder(ws, folder)) return s;
    return undefined;
  }

  private isCurrent(workspace: string): boolean {
    const folder = this.folderUri;
    return folder !== undefined && sameFolder(workspace, folder);
  }

  /** Asks the server for the current folder's status (at start; pushes do the rest). */
  async fetchStatus(): Promise<void> {
    const workspace = this.folderUri;
    if (workspace === undefined || !this.client.running) return;
    try {
      await this.client.request(ext.status, { workspace });
    } catch {
      // the status bar keeps saying it has no status; the server's error is in its output
    }
  }

  /** Re-lists the items if the current folder's revision moved since the last listing. */
  refresh(force = false): void {
    if (this.listing) {
      this.again = true;
      return;
    }
    const status = this.status;
    const key = status ? `${status.workspace}#${status.revision}` : undefined;
    if (!force && key !== undefined && key === this.listedRevision) return;
    this.listing = this.list(key).finally(() => {
      this.listing = undefined;
      if (this.again) {
        this.again = false;
        this.refresh();
      }
    });
  }

  private async list(key: string | undefined): Promise<void> {
    const workspace = this.folderUri;
    let items: ContextItem[] = [];
    if (workspace !== undefined && this.client.running) {
      try {
        items = (await this.client.request(ext.list, { workspace })).items;
      } catch {
        items = [];
      }
    }
    this.listedRevision = key;
    this.itemsValue = items;
    this.changedEmitter.fire();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.changedEmitter.dispose();
    this.statusEmitter.dispose();
  }
}
