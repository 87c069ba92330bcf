// The "Archive Search" view: the hits of the last archive search, one row each, the snippet as
// plain text with the server's highlights drawn by VS Code, why the item left in words, and a
// Restore action. A tree row is where the stable API draws given highlights (TreeItemLabel).
import * as vscode from 'vscode';
import type { SearchHit, SearchResult } from './generated/protocol';
import { archiveReason, grouped, timeAgo } from './format';
import { foundBy } from './settings';
import { flatSnippet, fromFirstHighlight } from './snippets';
import { iconOf } from './treeModel';

/** A hit (its item and why it left), and under it its snippet with the highlights. */
export interface HitNode {
  readonly hit: SearchHit;
  readonly snippet?: true;
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
    if (!node) return this.hits.map((hit) => ({ hit }));
    return node.snippet || !node.hit.snippet.trim() ? [] : [{ hit: node.hit, snippet: true }];
  }

  getTreeItem(node: HitNode): vscode.TreeItem {
    const { hit } = node;
    const why = `${archiveReason(hit.reason)} ${timeAgo(hit.archivedAt, Date.now())}`;
    const flat = flatSnippet(hit.snippet, hit.highlights);
    const open = { command: 'contextls.openArchived', title: 'Open Archived Item', arguments: [hit.item] };
    if (node.snippet) {
      // A narrow sidebar shows the start of a row: start it just before the first highlight.
      const { text, highlights } = fromFirstHighlight(flat.text, flat.highlights);
      const row = new vscode.TreeItem({ label: text, highlights });
      row.id = `${hit.item.id}/snippet`;
      row.tooltip = flat.text;
      row.accessibilityInformation = { label: `matched text: ${flat.text}` };
      row.command = open;
      return row;
    }
    const row = new vscode.TreeItem(hit.item.label, vscode.TreeItemCollapsibleState.Expanded);
    row.id = hit.item.id;
    row.description = why;
    row.iconPath = new vscode.ThemeIcon(iconOf(hit.item));
    row.contextValue = 'contextls.hit';
    row.accessibilityInformation = { label: `${hit.item.label}, ${why}` };
    const tooltip = new vscode.MarkdownString();
    tooltip.appendText(`${hit.item.id} · ${hit.item.label}\n\n`);
    tooltip.appendText(`${why} · ${grouped(hit.item.tokens)} tokens · found by ${foundBy(hit.modes)}`);
    row.tooltip = tooltip;
    row.command = open;
    return row;
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}
