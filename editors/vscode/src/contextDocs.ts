// Read-only, live documents on `contextls:` URIs: the rendered window of a folder (Show
// Context), an item's text (a note, an unsaved buffer's code) and an archived item's text. One
// URI per thing, so showing it again shows the same tab; every status push refreshes the open ones,
// and a restored tab after a restart asks the provider again (never a dirty Untitled-N).
import * as vscode from 'vscode';
import type { ContextClient } from './client';
import type { ContextItem } from './generated/protocol';
import * as ext from './lsp_ext';
import { sameFolder } from './model';

export const SCHEME = 'contextls';

type Target =
  | { readonly kind: 'context'; readonly workspace: string }
  | { readonly kind: 'item'; readonly workspace: string; readonly id: string }
  | { readonly kind: 'archived'; readonly workspace: string; readonly id: string };

/** A name that is one segment of a URI path (no separators) and reads well in a tab. */
function tabName(text: string): string {
  return text.replace(/[/\\]+/g, '∕').slice(0, 80);
}

export function contextUri(folder: vscode.WorkspaceFolder): vscode.Uri {
  return vscode.Uri.from({ scheme: SCHEME, path: `/${tabName(folder.name)}/Context.md`, query: query({ workspace: folder.uri.toString() }) });
}

export function itemUri(folder: vscode.WorkspaceFolder, item: ContextItem, archived = false): vscode.Uri {
  return vscode.Uri.from({
    scheme: SCHEME,
    path: `/${tabName(folder.name)}/${item.id} ${tabName(item.label)}`,
    query: query({ workspace: folder.uri.toString(), [archived ? 'archived' : 'item']: item.id }),
  });
}

/** A rendered window (Show Context), not an item's text. */
export function isContextUri(uri: vscode.Uri): boolean {
  return targetOf(uri)?.kind === 'context';
}

function query(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

function targetOf(uri: vscode.Uri): Target | undefined {
  const q = new URLSearchParams(uri.query);
  const workspace = q.get('workspace');
  if (!workspace) return undefined;
  const item = q.get('item');
  if (item) return { kind: 'item', workspace, id: item };
  const archived = q.get('archived');
  if (archived) return { kind: 'archived', workspace, id: archived };
  return { kind: 'context', workspace };
}

export class ContextDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly subscriptions: vscode.Disposable[];
  /** Archived items seen in search hits: the archive has no request by id. */
  private readonly archived = new Map<string, ContextItem>();

  constructor(private readonly client: ContextClient) {
    this.subscriptions = [
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, this),
      client.onStatus((status) => {
        this.refresh((target) => sameFolder(target.workspace, status.workspace));
      }),
      client.onReady(() => {
        this.refresh(() => true);
      }),
      client.onStopped(() => {
        this.refresh(() => true);
      }),
    ];
  }

  /** Remembers archived items (from a search) so their documents can be shown. */
  rememberArchived(items: readonly ContextItem[]): void {
    for (const item of items) this.archived.set(item.id, item);
  }

  private refresh(which: (target: Target) => boolean): void {
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme !== SCHEME || doc.isClosed) continue;
      const target = targetOf(doc.uri);
      if (target && target.kind !== 'archived' && which(target)) this.changed.fire(doc.uri);
    }
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const target = targetOf(uri);
    if (!target) return `Not a contextls document: ${uri.toString()}`;
    if (target.kind === 'archived') {
      return this.archived.get(target.id)?.content ?? `${target.id} is in the archive: run "contextls: Search Archive" to see it again.`;
    }
    // A restored tab may ask before the server is up: start it, unless starting just failed
    // (the person was told; Restart Server tries again).
    if (!this.client.running && (this.client.startFailed || !(await this.client.start()))) {
      return 'The contextls server is not running. Run "contextls: Restart Server", or see "contextls: Show Output".';
    }
    try {
      if (target.kind === 'context') {
        const rendered = await this.client.request(ext.render, { workspace: target.workspace, format: 'markdown' });
        return rendered.text;
      }
      const { items } = await this.client.request(ext.list, { workspace: target.workspace });
      const item = items.find((i) => i.id === target.id);
      return item?.content ?? `${target.id} is no longer in the window: "contextls: Search Archive" finds it in the archive.`;
    } catch (e) {
      return `contextls: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.changed.dispose();
  }
}
