// The "Archive Search" view: the hits of the last archive search, one row each, the snippet as
// plain text with the server's highlights drawn by VS Code, why the item left in words, and a
// Restore action. A tree row is where the stable API draws given highlights (TreeItemLabel).
import * as vscode from 'vscode';
import type { SearchHit, SearchResult } from './generated/protocol';
import { archiveReason, grouped, timeAgo } from './format';
import { foundBy } from './settings';
import { flatSnippet } from './snippets';
import { iconOf } from './treeModel';

export interface HitNode {
  readonly hit: SearchHit;
}

export class SearchView implements vscode.TreeDataProvider<HitNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<HitNode>;
  private hits: readonly SearchHit[] = [];
  /** The last query, offered again by the next search. */
  lastQuery = '';

  constructor() {
    this.view = vscode.window.createTreeView('contextls.search', { treeDataProvider: this, canSelectMany: true });
  }

  get selection(): readonly SearchHit[] {
    return this.view.selection.map((n) => n.hit);
  }

  /** Shows a search's hits and brings the view forward. */
  async show(query: string, result: SearchResult): Promise<void> {
    this.lastQuery = query;
    this.hits = result.hits;
    const count = result.hits.length;
    this.view.description = `“${query}”`;
    this.view.message =
      count === 0
        ? `Nothing in the archive matches “${query}”.${result.warning ? ` ${result.warning}` : ''}`
        : `${count} hit${count === 1 ? '' : 's'} for “${query}” (${result.mode === 'keyword' ? 'words' : result.mode === 'semantic' ? 'meaning' : 'words and meaning'})` +
          (result.warning ? `. ${result.warning}` : '');
    await vscode.commands.executeCommand('setContext', 'contextls.hasSearchHits', count > 0);
    this.changed.fire(undefined);
    await vscode.commands.executeCommand('contextls.search.focus');
  }

  /** Drops hits that are back in the window. */
  forget(ids: readonly string[]): void {
    const gone = new Set(ids);
    const before = this.hits.length;
    this.hits = this.hits.filter((h) => !gone.has(h.item.id));
    if (this.hits.length !== before) this.changed.fire(undefined);
  }

  getChildren(node?: HitNode): HitNode[] {
    return node ? [] : this.hits.map((hit) => ({ hit }));
  }

  getTreeItem({ hit }: HitNode): vscode.TreeItem {
    const { text, highlights } = flatSnippet(hit.snippet, hit.highlights);
    const row = new vscode.TreeItem({ label: text || hit.item.label, highlights: text ? highlights : [] });
    row.id = hit.item.id;
    row.description = `${hit.item.label} · ${archiveReason(hit.reason)}`;
    row.iconPath = new vscode.ThemeIcon(iconOf(hit.item));
    row.contextValue = 'contextls.hit';
    row.accessibilityInformation = {
      label: `${hit.item.label}, ${archiveReason(hit.reason)}: ${text}`,
    };
    const tooltip = new vscode.MarkdownString();
    tooltip.appendText(`${hit.item.id} · ${hit.item.label}\n\n`);
    tooltip.appendText(
      `${archiveReason(hit.reason)} ${timeAgo(hit.archivedAt, Date.now())} · ${grouped(hit.item.tokens)} tokens · found by ${foundBy(hit.modes)}`,
    );
    row.tooltip = tooltip;
    row.command = { command: 'contextls.openArchived', title: 'Open Archived Item', arguments: [hit.item] };
    return row;
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}
