// The commands on items: pin, remove, read again, copy, forget, open; clear and restore. Rows of
// the items view pass themselves; the palette asks which item.
import * as vscode from 'vscode';
import type { ContextClient } from './client';
import { askModal, chooseModal, clickedItems, itemOf, nonEmpty, note, UserError, workspaceUri } from './commandKit';
import { contextUri, itemUri, type ContextDocuments } from './contextDocs';
import type { ContextItem, SearchHit } from './generated/protocol';
import * as ext from './lsp_ext';
import { currentFolder, type WindowModel } from './model';
import { plural, restoreReport } from './planned';
import type { SearchView } from './searchView';

export class ItemCommands {
  constructor(
    private readonly client: ContextClient,
    private readonly model: WindowModel,
    private readonly docs: ContextDocuments,
    private readonly searchView: SearchView,
    private readonly selectedItems: () => readonly ContextItem[],
    private readonly focusedRows: () => Promise<readonly ContextItem[]>,
  ) {}

  register(): Record<string, (...args: unknown[]) => Promise<unknown>> {
    return {
      'contextls.pin': (node, nodes) => this.pin(node, nodes, true),
      'contextls.unpin': (node, nodes) => this.pin(node, nodes, false),
      'contextls.remove': (node, nodes) => this.remove(node, nodes),
      'contextls.removeFocused': () => this.removeFocused(),
      'contextls.reread': (node, nodes) => this.reread(node, nodes),
      'contextls.showWhole': (node, nodes) => this.setView(node, nodes, 'whole'),
      'contextls.showOutline': (node, nodes) => this.setView(node, nodes, 'outline'),
      'contextls.forget': (node, nodes) => this.forget(node, nodes),
      'contextls.copyItem': (node, nodes) => this.copyItem(node, nodes),
      'contextls.openItem': (node) => this.openItem(node),
      'contextls.clear': () => this.clear(),
      'contextls.restore': (ids) => this.restore(ids),
      'contextls.restoreHit': (node, nodes) => this.restoreHits(node, nodes),
      'contextls.openArchived': (item) => this.openArchived(item),
    };
  }

  async pin(node: unknown, nodes: unknown, pinned: boolean): Promise<void> {
    const ids = await this.idsFrom(node, nodes, pinned ? 'Pin which item?' : 'Unpin which item?', (i) => i.pinned !== pinned);
    for (const id of ids) await this.client.request(ext.pin, { workspace: workspaceUri(), id, pin: pinned });
  }

  async remove(node: unknown, nodes: unknown): Promise<void> {
    const ids = await this.idsFrom(node, nodes, 'Remove which item?', () => true);
    if (ids.length === 0) return;
    const labels = new Map(this.model.items.map((i) => [i.id, i.label]));
    const result = await this.client.request(ext.remove, { workspace: workspaceUri(), ids: nonEmpty(ids) });
    const them = result.removed.length === 1 ? 'it' : 'them';
    const named = result.removed.map((id) => labels.get(id) ?? id).join(', ');
    note(`contextls: removed ${named} to the archive (Restore from Archive brings ${them} back)`);
  }

  /** Delete in the items view: the focused row (or the selection it is part of); never a picker. */
  async removeFocused(): Promise<void> {
    const rows = await this.focusedRows();
    if (rows.length > 0) await this.remove(undefined, rows.map((item) => ({ item })));
  }

  /** Reads items again from their files: the clicked ones, else every stale item. */
  async reread(node: unknown, nodes: unknown): Promise<ContextItem[]> {
    const clicked = clickedItems(node, nodes).map((i) => i.id);
    const ids = clicked.length > 0 ? clicked : typeof node === 'string' ? [node] : undefined;
    const result = await this.client.request(ext.refresh, { workspace: workspaceUri(), ids: ids ? nonEmpty(ids) : null });
    note(
      result.refreshed.length > 0
        ? `contextls: read ${result.refreshed.map((i) => i.label).join(', ')} again`
        : 'contextls: nothing to read again',
    );
    return result.refreshed;
  }

  /** Shows items whole again, or as their outlines; a whole file may need room (said, as any eviction). */
  async setView(node: unknown, nodes: unknown, view: 'whole' | 'outline'): Promise<ContextItem[]> {
    const ids = await this.idsFrom(
      node,
      nodes,
      view === 'whole' ? 'Show which outline whole?' : 'Show which item as its outline?',
      (i) => (view === 'whole' ? i.view === 'outline' : i.view === 'whole' && (i.kind === 'file' || typeof i.metadata.symbol === 'string')),
    );
    if (ids.length === 0) return [];
    const result = await this.client.request(ext.setView, { workspace: workspaceUri(), ids: nonEmpty(ids), view });
    const how = view === 'whole' ? 'whole' : 'as its outline';
    const keptWhole = result.keptWhole;
    const left = keptWhole.length > 0 ? `; ${keptWhole.map((i) => i.label).join(', ')} left whole (nothing to hide)` : '';
    note(
      (result.items.length > 0
        ? `contextls: ${result.items.map((i) => `${i.label} (${plural(i.tokens, 'token')})`).join(', ')} shown ${how}`
        : `contextls: already shown ${how}`) + left,
    );
    return result.items;
  }

  /** Copies the items' text (several: one after the other, each under its label). */
  async copyItem(node: unknown, nodes: unknown): Promise<void> {
    const ids = new Set(await this.idsFrom(node, nodes, 'Copy which item?', () => true));
    const items = this.model.items.filter((i) => ids.has(i.id));
    const [only] = items;
    const text = items.length === 1 && only ? only.content : items.map((i) => `${i.label}\n\n${i.content}`).join('\n\n');
    await vscode.env.clipboard.writeText(text);
    note(`contextls: copied ${items.map((i) => i.label).join(', ')}`);
  }

  /** Removes items for good (window, archive, database file), after a modal question. */
  async forget(node: unknown, nodes: unknown): Promise<string[]> {
    const ids = await this.idsFrom(node, nodes, 'Forget which item for good?', () => true);
    if (ids.length === 0) return [];
    const params = { workspace: workspaceUri(), ids: nonEmpty(ids) };
    const planned = await this.client.request(ext.forget, { ...params, dryRun: true });
    const labels = planned.forgotten.map((i) => i.label).join(', ');
    const one = planned.forgotten.length === 1;
    const confirmed = await askModal(
      {
        message: `Forget ${labels} for good?`,
        detail: `${one ? 'It leaves' : 'They leave'} the window and the archive, and ${one ? 'its' : 'their'} text the database file. This cannot be undone.`,
        confirm: one ? 'Forget for Good' : `Forget ${String(planned.forgotten.length)} Items for Good`,
      },
      one ? 'Keep It' : 'Keep Them',
    );
    if (!confirmed) return [];
    const result = await this.client.request(ext.forget, params);
    note(`contextls: forgot ${plural(result.forgotten.length, 'item')} for good`);
    return result.forgotten.map((i) => i.id);
  }

  async clear(): Promise<void> {
    const all = 'Clear All';
    const keep = 'Clear, Keep Pinned';
    const pinned = this.model.status?.pinnedCount ?? 0;
    const answer = await chooseModal(
      'Clear the contextls window?',
      'Its items go to the archive, where Search Archive and Restore find them.',
      pinned > 0 ? [keep, all] : [all],
      'Keep the Window',
    );
    if (answer === undefined) return;
    const result = await this.client.request(ext.clear, { workspace: workspaceUri(), keepPinned: answer === keep });
    note(`contextls: cleared ${plural(result.cleared, 'item')} to the archive`);
  }

  /** Opens an item from its row: its lines, or its text; the keyboard stays in the view. */
  async openItem(node: unknown): Promise<void> {
    const item = itemOf(node) ?? (typeof node === 'string' ? this.model.items.find((i) => i.id === node) : undefined);
    if (!item) return;
    const uri = typeof item.metadata.uri === 'string' ? vscode.Uri.parse(item.metadata.uri) : undefined;
    if (uri?.scheme === 'file' && item.kind !== 'text' && item.kind !== 'repl-history') {
      const start = typeof item.metadata.startLine === 'number' ? item.metadata.startLine - 1 : undefined;
      const end = typeof item.metadata.endLine === 'number' ? item.metadata.endLine - 1 : start;
      const doc = await vscode.workspace.openTextDocument(uri);
      const last = Math.min(end ?? 0, doc.lineCount - 1);
      const selection = start === undefined ? undefined : new vscode.Range(start, 0, last, doc.lineAt(last).text.length);
      await vscode.window.showTextDocument(doc, { selection, preview: true, preserveFocus: true });
      return;
    }
    const folder = currentFolder();
    if (!folder) return;
    await this.showDocument(itemUri(folder, item), item);
  }

  async openArchived(given: unknown): Promise<void> {
    const item = given as ContextItem | undefined;
    const folder = currentFolder();
    if (!item || !folder) return;
    this.docs.rememberArchived([item]);
    await this.showDocument(itemUri(folder, item, true), item);
  }

  private async showDocument(uri: vscode.Uri, item: ContextItem): Promise<void> {
    const doc = await vscode.workspace.openTextDocument(uri);
    const language = typeof item.metadata.language === 'string' ? item.metadata.language : item.kind === 'text' ? 'markdown' : undefined;
    const typed = language && doc.languageId !== language ? await vscode.languages.setTextDocumentLanguage(doc, language).then(undefined, () => doc) : doc;
    await vscode.window.showTextDocument(typed, { preview: true, preserveFocus: true });
  }

  async showContext(): Promise<void> {
    const folder = currentFolder();
    if (!folder) throw new UserError('contextls needs an open folder: open a folder or workspace first.');
    const doc = await vscode.workspace.openTextDocument(contextUri(folder));
    await vscode.window.showTextDocument(doc, { preview: false });
  }

  /** Restores archived items: the ones given, else one of the last evicted (or a search). */
  async restore(given: unknown): Promise<ContextItem[]> {
    let ids = typeof given === 'string' ? [given] : Array.isArray(given) ? given.filter((g): g is string => typeof g === 'string') : [];
    if (ids.length === 0) {
      const inWindow = new Set(this.model.items.map((i) => i.id));
      const recent = (this.model.status?.lastEvicted ?? []).filter((i) => !inWindow.has(i.id));
      const searchEntry = { label: '$(search) Search the archive…', id: '' };
      const picked = await vscode.window.showQuickPick(
        [...recent.map((i) => ({ label: i.label, description: `${i.id} · ${plural(i.tokens, 'token')}`, id: i.id })), searchEntry],
        { title: 'contextls: restore which recently evicted item?' },
      );
      if (!picked) return [];
      if (!picked.id) {
        await vscode.commands.executeCommand('contextls.search');
        return [];
      }
      ids = [picked.id];
    }
    return restoreItems(this.client, workspaceUri(), ids, this.searchView);
  }

  async restoreHits(node: unknown, nodes: unknown): Promise<ContextItem[]> {
    const hitOf = (n: unknown): SearchHit | undefined => (n && typeof n === 'object' && 'hit' in n ? (n as { hit: SearchHit }).hit : undefined);
    const many = Array.isArray(nodes) ? nodes.map(hitOf).filter((h): h is SearchHit => h !== undefined) : [];
    const hits = many.length > 0 ? many : [hitOf(node) ?? this.searchView.selection[0]].filter((h): h is SearchHit => h !== undefined);
    if (hits.length === 0) throw new UserError('Choose a hit in Archive Search to restore.');
    return restoreItems(this.client, workspaceUri(), hits.map((h) => h.item.id), this.searchView);
  }

  /**
   * The ids a row command acts on: the clicked row(s), an id given by a caller
   * (`executeCommand('contextls.pin', 'ctx-3')`), the view's selection, or one the user picks.
   */
  private async idsFrom(node: unknown, nodes: unknown, title: string, eligible: (i: ContextItem) => boolean): Promise<string[]> {
    const clicked = clickedItems(node, nodes);
    if (clicked.length > 0) return clicked.map((i) => i.id);
    if (typeof node === 'string') return [node];
    const selected = this.selectedItems().filter(eligible);
    if (selected.length > 0) return selected.map((i) => i.id);
    const candidates = [...this.model.items].reverse().filter(eligible);
    if (candidates.length === 0) throw new UserError('No item in the window to choose from.');
    const picked = await vscode.window.showQuickPick(
      candidates.map((i) => ({ label: i.label, description: `${i.id} · ${i.kind} · ${plural(i.tokens, 'token')}`, id: i.id })),
      { title: `contextls: ${title}`, canPickMany: false },
    );
    return picked ? [picked.id] : [];
  }
}

/**
 * Restores archived items by id. A restore is an explicit add: it slides the window, and what it
 * evicts is announced like any eviction, with its own way back.
 */
export async function restoreItems(client: ContextClient, workspace: string, ids: readonly string[], searchView?: SearchView): Promise<ContextItem[]> {
  const result = await client.request(ext.restore, { workspace, ids: nonEmpty(ids) });
  searchView?.forget([...result.items.map((i) => i.id), ...result.alreadyInWindow]);
  note(restoreReport(result));
  return result.items;
}
