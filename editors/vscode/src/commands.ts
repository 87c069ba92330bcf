// The palette commands. Each turns what the user chose into one typed request; the server's
// answer (status, evictions) reaches the status bar, the view and the highlights through the
// model, so commands only report errors and what they added.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ServerError, type ContextClient } from './client';
import type { ContextItem } from './generated/protocol';
import type { Node } from './itemsView';
import * as ext from './lsp_ext';
import { currentFolder, type WindowModel } from './model';
import { problemLines, problemsText } from './problems';
import { regionOf } from './ranges';
import { evictionMessage } from './format';
import { foundBy, searchMode } from './settings';

const FOLDER_SKIP = '**/{.git,node_modules,.venv,venv,__pycache__,.mypy_cache,.ruff_cache,.pytest_cache}/**';
const FOLDER_LIMIT = 500;

export class Commands {
  constructor(
    private readonly client: ContextClient,
    private readonly model: WindowModel,
    private readonly selectedItems: () => readonly ContextItem[],
  ) {}

  register(): vscode.Disposable[] {
    const commands: Record<string, (...args: unknown[]) => Promise<unknown>> = {
      'contextls.addSelection': () => this.addSelection(false),
      'contextls.addSelectionPinned': () => this.addSelection(true),
      'contextls.addFile': (uri, uris) => this.addFile(uri, uris, false),
      'contextls.addFilePinned': (uri, uris) => this.addFile(uri, uris, true),
      'contextls.addSymbol': () => this.addSymbol(),
      'contextls.addProblems': () => this.addProblems(),
      'contextls.addTerminalSelection': () => this.addTerminalSelection(),
      'contextls.addText': (text) => this.addText(text),
      'contextls.showContext': () => this.showContext(),
      'contextls.copyContext': () => this.copyContext(),
      'contextls.search': (query) => this.search(query),
      'contextls.restore': (ids) => this.restore(ids),
      'contextls.pin': (node, nodes) => this.pin(node, nodes, true),
      'contextls.unpin': (node, nodes) => this.pin(node, nodes, false),
      'contextls.remove': (node, nodes) => this.remove(node, nodes),
      'contextls.clear': () => this.clear(),
      'contextls.openItem': (node) => this.openItem(node),
      'contextls.reread': (node, nodes) => this.reread(node, nodes),
      'contextls.forget': (node, nodes) => this.forget(node, nodes),
    };
    return Object.entries(commands).map(([id, handler]) =>
      vscode.commands.registerCommand(id, (...args: unknown[]) => this.guard(() => handler(...args))),
    );
  }

  /** Runs a command; a failure becomes one error notification with the server's message. */
  private async guard<T>(action: () => Promise<T>): Promise<T | undefined> {
    try {
      return await action();
    } catch (e) {
      await showError(e);
      return undefined;
    }
  }

  private workspace(): string {
    const folder = currentFolder();
    if (!folder) throw new UserError('contextls needs an open folder: open a folder or workspace first.');
    return folder.uri.toString();
  }

  // ------------------------------------------------------------------ adding

  async addSelection(pin: boolean): Promise<ContextItem[]> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) throw new UserError('Open a file and select some text to add.');
    const doc = editor.document;
    const added: ContextItem[] = [];
    // In document order, so merges of adjacent selections come out the same every time.
    const selections = [...editor.selections].sort((a, b) => a.start.compareTo(b.start));
    for (const selection of selections) {
      const range = regionOf(selection, (line) => doc.lineAt(line).text.length);
      const text = doc.getText(new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character));
      if (!text.trim()) continue;
      const result = await this.client.request(ext.addRegion, {
        uri: doc.uri.toString(),
        range,
        text,
        language: doc.languageId,
        pin,
      });
      added.push(result.item);
    }
    if (added.length === 0) throw new UserError('Nothing to add: the selection (or the current line) is blank.');
    report(added);
    return added;
  }

  async addFile(uri: unknown, uris: unknown, pin: boolean): Promise<ContextItem[]> {
    let targets = Array.isArray(uris) ? uris.filter((u): u is vscode.Uri => u instanceof vscode.Uri) : [];
    if (targets.length === 0 && uri instanceof vscode.Uri) targets = [uri];
    if (targets.length === 0) {
      const doc = vscode.window.activeTextEditor?.document;
      if (!doc || doc.uri.scheme !== 'file') throw new UserError('Open a file, or choose files in the Explorer, to add.');
      targets = [doc.uri];
    }
    const files: vscode.Uri[] = [];
    let folders = 0;
    for (const target of targets) {
      const stat = await vscode.workspace.fs.stat(target);
      if (stat.type & vscode.FileType.Directory) {
        folders++;
        const found = await vscode.workspace.findFiles(new vscode.RelativePattern(target, '**/*'), FOLDER_SKIP, FOLDER_LIMIT + 1);
        files.push(...found.sort((a, b) => a.fsPath.localeCompare(b.fsPath)));
      } else {
        files.push(target);
      }
    }
    if (files.length > FOLDER_LIMIT) {
      throw new UserError(`That is more than ${FOLDER_LIMIT} files; choose fewer files or a smaller folder.`);
    }
    const added: ContextItem[] = [];
    const skipped: string[] = [];
    for (const file of files) {
      try {
        added.push((await this.client.request(ext.addFile, { uri: file.toString(), pin })).item);
      } catch (e) {
        // Inside a folder, binary and oversized files are expected: skip them and say so.
        if (folders > 0 && e instanceof ServerError && (e.codeName === 'BINARY_FILE' || e.codeName === 'FILE_TOO_LARGE')) {
          skipped.push(vscode.workspace.asRelativePath(file));
          continue;
        }
        throw e;
      }
    }
    report(added, skipped);
    return added;
  }

  async addSymbol(): Promise<ContextItem> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) throw new UserError('Open a file and put the cursor in a symbol to add it.');
    const doc = editor.document;
    const symbols = await vscode.commands.executeCommand<(vscode.DocumentSymbol | vscode.SymbolInformation)[] | undefined>(
      'vscode.executeDocumentSymbolProvider',
      doc.uri,
    );
    const symbol = innermostSymbol(symbols ?? [], editor.selection.active);
    if (!symbol) {
      throw new UserError(`No symbol at the cursor in ${path.basename(doc.uri.fsPath)} (does a language extension provide symbols for ${doc.languageId}?).`);
    }
    const text = doc.getText(symbol.range);
    const result = await this.client.request(ext.addSymbol, {
      uri: doc.uri.toString(),
      name: symbol.name,
      symbolKind: vscode.SymbolKind[symbol.kind],
      range: toLsp(symbol.range),
      text,
      language: doc.languageId,
    });
    report([result.item]);
    return result.item;
  }

  async addProblems(): Promise<ContextItem> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) throw new UserError('Open a file with problems to add them.');
    const doc = editor.document;
    const all = vscode.languages.getDiagnostics(doc.uri);
    const inSelection = all.filter((d) => editor.selections.some((s) => !s.isEmpty && s.intersection(d.range) !== undefined));
    const chosen = inSelection.length > 0 ? inSelection : all;
    if (chosen.length === 0) throw new UserError(`${vscode.workspace.asRelativePath(doc.uri)} has no problems to add.`);
    const relative = vscode.workspace.asRelativePath(doc.uri, false);
    const problems = chosen.map((d) => ({
      line: d.range.start.line,
      character: d.range.start.character,
      severity: d.severity,
      message: d.message,
      source: d.source,
      code: typeof d.code === 'object' ? d.code.value : d.code,
    }));
    const result = await this.client.request(ext.addText, {
      workspace: this.workspace(),
      kind: 'error',
      content: problemsText(relative, problems),
      metadata: { uri: doc.uri.toString(), path: relative, ...problemLines(problems), source: 'diagnostics' },
    });
    report([result.item]);
    return result.item;
  }

  async addTerminalSelection(): Promise<ContextItem> {
    const terminal = vscode.window.activeTerminal;
    if (!terminal) throw new UserError('No active terminal: select text in a terminal first.');
    // The terminal's selection has no API: copy it through the clipboard, then put back what
    // the clipboard held.
    const saved = await vscode.env.clipboard.readText();
    const sentinel = `contextls-no-selection-${Date.now().toString()}`;
    let text: string;
    try {
      await vscode.env.clipboard.writeText(sentinel);
      await vscode.commands.executeCommand('workbench.action.terminal.copySelection');
      text = await vscode.env.clipboard.readText();
    } finally {
      await vscode.env.clipboard.writeText(saved);
    }
    if (text === sentinel || !text.trim()) throw new UserError(`Select text in the terminal "${terminal.name}" first.`);
    const result = await this.client.request(ext.addText, {
      workspace: this.workspace(),
      kind: 'repl-history',
      content: text,
      metadata: { source: 'terminal', terminal: terminal.name },
    });
    report([result.item]);
    return result.item;
  }

  async addText(given: unknown): Promise<ContextItem | undefined> {
    let text = typeof given === 'string' ? given : undefined;
    if (text === undefined) {
      const clipboard = await vscode.env.clipboard.readText();
      const typed = await vscode.window.showInputBox({
        title: 'contextls: Add Text',
        prompt: clipboard.trim() ? 'Text to add; leave empty to add the clipboard.' : 'Text to add.',
        placeHolder: clipboard.trim() ? `Clipboard: ${clipboard.trim().slice(0, 60)}` : undefined,
      });
      if (typed === undefined) return undefined;
      text = typed.trim() ? typed : clipboard;
    }
    if (!text.trim()) throw new UserError('Nothing to add: the text (and the clipboard) is empty.');
    const result = await this.client.request(ext.addText, { workspace: this.workspace(), kind: 'text', content: text });
    report([result.item]);
    return result.item;
  }

  // ------------------------------------------------------------------ reading

  private async rendered(): Promise<string> {
    return (await this.client.request(ext.render, { workspace: this.workspace(), format: 'markdown' })).text;
  }

  async showContext(): Promise<void> {
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: await this.rendered() });
    await vscode.window.showTextDocument(doc, { preview: false });
  }

  async copyContext(): Promise<void> {
    const text = await this.rendered();
    await vscode.env.clipboard.writeText(text);
    vscode.window.setStatusBarMessage(`contextls: copied the context (${text.length.toLocaleString('en-US')} characters)`, 4000);
  }

  async search(given: unknown): Promise<void> {
    const workspace = this.workspace();
    const pick = vscode.window.createQuickPick<vscode.QuickPickItem & { id: string }>();
    pick.title = 'contextls: search the archive';
    pick.placeholder = 'Words to search evicted and cleared items for; Enter restores the chosen one';
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    let generation = 0;
    const run = async (query: string): Promise<void> => {
      const mine = ++generation;
      if (!query.trim()) {
        pick.items = [];
        return;
      }
      pick.busy = true;
      try {
        const mode = searchMode(vscode.workspace.getConfiguration());
        const { hits, warning } = await this.client.request(ext.search, { workspace, query, limit: 50, mode });
        if (mine !== generation) return;
        pick.title = warning ? `contextls: search the archive (${warning})` : 'contextls: search the archive';
        pick.items = hits.map((hit) => ({
          id: hit.item.id,
          label: hit.item.label,
          description: `${hit.item.id} · ${hit.item.kind} · ${hit.item.tokens} tokens · ${hit.reason} · by ${foundBy(hit.modes)}`,
          detail: hit.snippet.replace(/\s+/g, ' '),
          alwaysShow: true,
        }));
      } catch (e) {
        if (mine === generation) pick.items = [{ id: '', label: `$(error) ${messageOf(e)}`, alwaysShow: true }];
      } finally {
        if (mine === generation) pick.busy = false;
      }
    };
    let timer: NodeJS.Timeout | undefined;
    pick.onDidChangeValue((value) => {
      clearTimeout(timer);
      timer = setTimeout(() => void run(value), 150);
    });
    const chosen = new Promise<string | undefined>((resolve) => {
      pick.onDidAccept(() => {
        resolve(pick.selectedItems[0]?.id);
        pick.hide();
      });
      pick.onDidHide(() => {
        resolve(undefined);
      });
    });
    if (typeof given === 'string') {
      pick.value = given;
      await run(given);
    }
    pick.show();
    const id = await chosen;
    clearTimeout(timer);
    pick.dispose();
    if (id) await this.restore([id]);
  }

  // ------------------------------------------------------------------ changing

  async restore(given: unknown): Promise<ContextItem[]> {
    let ids = typeof given === 'string' ? [given] : Array.isArray(given) ? given.filter((g) => typeof g === 'string') : [];
    if (ids.length === 0) {
      const recent = this.model.status?.lastEvicted ?? [];
      const searchEntry = { label: '$(search) Search the archive…', id: '' };
      const picked = await vscode.window.showQuickPick(
        [...recent.map((i) => ({ label: i.label, description: `${i.id} · ${i.tokens} tokens`, id: i.id })), searchEntry],
        { title: 'contextls: restore which recently evicted item?' },
      );
      if (!picked) return [];
      if (!picked.id) {
        await this.search(undefined);
        return [];
      }
      ids = [picked.id];
    }
    const result = await this.client.request(ext.restore, { workspace: this.workspace(), ids: nonEmpty(ids) });
    const said = [
      ...result.items.map((i) => `restored ${i.label}`),
      ...result.alreadyInWindow.map((id) => `${id} is already in the window`),
    ];
    vscode.window.setStatusBarMessage(`contextls: ${said.join('; ') || 'nothing to restore'}`, 4000);
    return result.items;
  }

  async pin(node: unknown, nodes: unknown, pinned: boolean): Promise<void> {
    const ids = await this.idsFrom(node, nodes, pinned ? 'Pin which item?' : 'Unpin which item?', (i) => i.pinned !== pinned);
    for (const id of ids) await this.client.request(ext.pin, { workspace: this.workspace(), id, pinned });
  }

  async remove(node: unknown, nodes: unknown): Promise<void> {
    const ids = await this.idsFrom(node, nodes, 'Remove which item?', () => true);
    if (ids.length === 0) return;
    await this.client.request(ext.remove, { workspace: this.workspace(), ids: nonEmpty(ids) });
  }

  /** Reads stale items again from their files: the clicked ones, else every stale item. */
  async reread(node: unknown, nodes: unknown): Promise<ContextItem[]> {
    const many = Array.isArray(nodes) ? nodes.map(itemOf).filter((i): i is ContextItem => i !== undefined) : [];
    const one = itemOf(node)?.id ?? (typeof node === 'string' ? node : undefined);
    const ids = many.length > 0 ? many.map((i) => i.id) : one !== undefined ? [one] : undefined;
    const result = await this.client.request(ext.refresh, { workspace: this.workspace(), ids: ids ? nonEmpty(ids) : null });
    vscode.window.setStatusBarMessage(
      result.refreshed.length > 0
        ? `contextls: read ${result.refreshed.map((i) => i.label).join(', ')} again`
        : 'contextls: no stale item',
      4000,
    );
    return result.refreshed;
  }

  /** Removes items for good (window, archive, database file), after a modal question. */
  async forget(node: unknown, nodes: unknown): Promise<string[]> {
    const ids = await this.idsFrom(node, nodes, 'Forget which item for good?', () => true);
    if (ids.length === 0) return [];
    const params = { workspace: this.workspace(), ids: nonEmpty(ids) };
    const planned = await this.client.request(ext.forget, { ...params, dryRun: true });
    const labels = planned.forgotten.map((i) => i.label).join(', ');
    const answer = await vscode.window.showWarningMessage(
      `Forget ${labels} for good? It leaves the window and the archive, and its text the database file. This cannot be undone.`,
      { modal: true },
      'Forget',
    );
    if (answer !== 'Forget') return [];
    const result = await this.client.request(ext.forget, params);
    vscode.window.setStatusBarMessage(`contextls: forgot ${result.forgotten.length} item(s)`, 4000);
    return result.forgotten.map((i) => i.id);
  }

  async clear(): Promise<void> {
    const all = 'Clear';
    const keep = 'Clear, Keep Pinned';
    const answer = await vscode.window.showWarningMessage(
      'Clear the contextls window? Its items go to the archive, where search and restore find them.',
      { modal: true },
      all,
      keep,
    );
    if (answer === undefined) return;
    const result = await this.client.request(ext.clear, { workspace: this.workspace(), keepPinned: answer === keep });
    vscode.window.setStatusBarMessage(`contextls: cleared ${result.cleared} items to the archive`, 4000);
  }

  async openItem(node: unknown): Promise<void> {
    const item = itemOf(node) ?? (typeof node === 'string' ? this.model.items.find((i) => i.id === node) : undefined);
    if (!item) return;
    const uri = typeof item.metadata.uri === 'string' ? vscode.Uri.parse(item.metadata.uri) : undefined;
    if (uri && item.kind !== 'text' && item.kind !== 'repl-history') {
      const start = typeof item.metadata.startLine === 'number' ? item.metadata.startLine - 1 : undefined;
      const end = typeof item.metadata.endLine === 'number' ? item.metadata.endLine - 1 : start;
      const doc = await vscode.workspace.openTextDocument(uri);
      const selection =
        start === undefined || end === undefined
          ? undefined
          : new vscode.Range(start, 0, Math.min(end, doc.lineCount - 1), doc.lineAt(Math.min(end, doc.lineCount - 1)).text.length);
      await vscode.window.showTextDocument(doc, { selection, preview: true });
      return;
    }
    const doc = await vscode.workspace.openTextDocument({ content: item.content, language: languageOf(item) });
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  /**
   * The ids a pin/unpin/remove acts on: the clicked row(s), an id given by a caller
   * (`executeCommand('contextls.pin', 'ctx-3')`), the view's selection, or one the user picks.
   */
  private async idsFrom(node: unknown, nodes: unknown, title: string, eligible: (i: ContextItem) => boolean): Promise<string[]> {
    const many = Array.isArray(nodes) ? nodes.map(itemOf).filter((i): i is ContextItem => i !== undefined) : [];
    if (many.length > 0) return many.map((i) => i.id);
    const one = itemOf(node)?.id ?? (typeof node === 'string' ? node : undefined);
    if (one !== undefined) return [one];
    const selected = this.selectedItems().filter(eligible);
    if (selected.length > 0) return selected.map((i) => i.id);
    const candidates = [...this.model.items].reverse().filter(eligible);
    if (candidates.length === 0) throw new UserError('No item in the window to choose from.');
    const picked = await vscode.window.showQuickPick(
      candidates.map((i) => ({ label: i.label, description: `${i.id} · ${i.kind} · ${i.tokens} tokens`, id: i.id })),
      { title: `contextls: ${title}`, canPickMany: false },
    );
    return picked ? [picked.id] : [];
  }
}

/** The eviction notification: names the items and offers to restore them. */
export async function announceEviction(client: ContextClient, workspace: string, items: readonly ContextItem[], reason: string): Promise<void> {
  if (items.length === 0) return;
  const restore = 'Restore';
  const answer = await vscode.window.showInformationMessage(evictionMessage(items, reason), restore);
  if (answer !== restore) return;
  try {
    await client.request(ext.restore, { workspace, ids: nonEmpty(items.map((i) => i.id)) });
  } catch (e) {
    await showError(e);
  }
}

/** A mistake the user can fix; shown like the server's errors. */
class UserError extends Error {}

async function showError(e: unknown): Promise<void> {
  const message = `contextls: ${messageOf(e)}`;
  if (e instanceof ServerError && (e.codeName === 'ITEM_TOO_LARGE' || e.codeName === 'NO_ROOM')) {
    const open = 'Open Settings';
    if ((await vscode.window.showErrorMessage(message, open)) === open) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'contextls.maxTokens');
    }
    return;
  }
  await vscode.window.showErrorMessage(message);
}

/** The protocol's id lists have at least one id (the schema's minItems). */
function nonEmpty(ids: readonly string[]): [string, ...string[]] {
  const [first, ...rest] = ids;
  if (first === undefined) throw new UserError('No item chosen.');
  return [first, ...rest];
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function report(added: readonly ContextItem[], skipped: readonly string[] = []): void {
  const labels = added.map((i) => i.label).join(', ');
  const skip = skipped.length ? `; skipped ${skipped.length} binary or oversized files` : '';
  vscode.window.setStatusBarMessage(`contextls: added ${labels || 'nothing'}${skip}`, 4000);
}

function itemOf(node: unknown): ContextItem | undefined {
  if (node && typeof node === 'object' && 'item' in node) return (node as Extract<Node, { item: ContextItem }>).item;
  return undefined;
}

function languageOf(item: ContextItem): string {
  const lang = item.metadata.language;
  return typeof lang === 'string' ? lang : 'plaintext';
}

function toLsp(range: vscode.Range): { start: { line: number; character: number }; end: { line: number; character: number } } {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

type AnySymbol = vscode.DocumentSymbol | vscode.SymbolInformation;

/** The innermost symbol whose range holds the position. */
function innermostSymbol(symbols: readonly AnySymbol[], at: vscode.Position): { name: string; kind: vscode.SymbolKind; range: vscode.Range } | undefined {
  let best: { name: string; kind: vscode.SymbolKind; range: vscode.Range } | undefined;
  const visit = (list: readonly AnySymbol[]): void => {
    for (const s of list) {
      const range = 'location' in s ? s.location.range : s.range;
      if (!range.contains(at)) continue;
      if (!best || best.range.contains(range)) best = { name: s.name, kind: s.kind, range };
      if ('children' in s) visit(s.children);
    }
  };
  visit(symbols);
  return best;
}
