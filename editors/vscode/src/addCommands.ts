// The commands that add to the window: selections, files and folders, symbols (or the enclosing
// block), problems, terminal text and notes. A buffer that is not a file (Untitled-N) is sent as
// text, since the server reads files from disk and cannot follow it.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { enclosingBlock, type BlockKind } from './blocks';
import { NotRunning, ServerError, type ContextClient } from './client';
import { askModal, consentTo, folderOrThrow, note, UserError, workspaceUri } from './commandKit';
import type { AddResult, ContextItem, Range, SymbolAtResult, SymbolInfo } from './generated/protocol';
import * as ext from './lsp_ext';
import { addAsAWhole, addedWords, addReport, describeTargets } from './planned';
import { problemLines, problemsText } from './problems';
import { regionOf } from './ranges';
import { isSecretPath } from './secretPaths';

export class AddCommands {
  constructor(private readonly client: ContextClient) {}

  register(): Record<string, (...args: unknown[]) => Promise<unknown>> {
    return {
      'contextls.addSelection': () => this.addSelection(false),
      'contextls.addSelectionPinned': () => this.addSelection(true),
      'contextls.addFile': (uri, uris) => this.addFile(uri, uris, false),
      'contextls.addFilePinned': (uri, uris) => this.addFile(uri, uris, true),
      'contextls.addSymbol': () => this.addSymbol(),
      'contextls.addOutline': (uri, uris) => this.addOutline(uri, uris),
      'contextls.addMap': (query) => this.addMap(query),
      'contextls.addProblems': () => this.addProblems(),
      'contextls.addTerminalSelection': () => this.addTerminalSelection(),
      'contextls.addText': (text) => this.addText(text),
    };
  }

  async addSelection(pin: boolean): Promise<ContextItem[]> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) throw new UserError('Open a file and select some text to add.');
    const doc = editor.document;
    const added: AddResult[] = [];
    // In document order, so merges of adjacent selections come out the same every time.
    const selections = [...editor.selections].sort((a, b) => a.start.compareTo(b.start));
    for (const selection of selections) {
      const range = regionOf(selection, (line) => doc.lineAt(line).text.length);
      const text = doc.getText(toRange(range));
      if (!text.trim()) continue;
      if (isFile(doc)) {
        const where = `${vscode.workspace.asRelativePath(doc.uri, false)}:${lineSpan(range)}`;
        added.push(await naming(where, this.client.request(ext.addRegion, { uri: doc.uri.toString(), range, text, language: doc.languageId, pin })));
      } else {
        added.push(await this.addUnsaved(doc, text, range, pin));
      }
    }
    if (added.length === 0) throw new UserError('Nothing to add: the selection (or the current line) is blank.');
    report(added, isFile(doc) ? '' : unsavedNote(doc));
    return added.map((r) => r.item);
  }

  /** An unsaved buffer's text as a code item, with its language and where it came from. */
  private async addUnsaved(doc: vscode.TextDocument, text: string, range: Range | undefined, pin: boolean, symbol?: { name: string; kind: string }): Promise<AddResult> {
    const name = path.basename(doc.fileName) || doc.uri.toString();
    const lines = range ? { startLine: range.start.line + 1, endLine: range.end.line + 1 } : {};
    const where = range ? `:${lineSpan(range)}` : '';
    return naming(`${name}${where}`, this.client.request(ext.addText, {
      workspace: workspaceUri(),
      kind: 'code',
      content: text,
      language: doc.languageId,
      pin,
      metadata: {
        title: `${name}${where}${symbol ? ` (${symbol.name})` : ''}`,
        source: 'unsaved buffer',
        buffer: doc.uri.toString(),
        language: doc.languageId,
        ...lines,
        ...(symbol ? { symbol: symbol.name, symbolKind: symbol.kind } : {}),
      },
    }));
  }

  async addFile(uri: unknown, uris: unknown, pin: boolean): Promise<ContextItem[]> {
    let targets = Array.isArray(uris) ? uris.filter((u): u is vscode.Uri => u instanceof vscode.Uri) : [];
    if (targets.length === 0 && uri instanceof vscode.Uri) targets = [uri];
    if (targets.length === 0) {
      const doc = vscode.window.activeTextEditor?.document;
      if (!doc) throw new UserError('Open a file, or choose files and folders in the Explorer, to add.');
      if (!isFile(doc)) {
        const result = await this.addUnsaved(doc, doc.getText(), undefined, pin);
        report([result], unsavedNote(doc));
        return [result.item];
      }
      targets = [doc.uri];
    }
    const folders = await Promise.all(targets.map(isFolder));
    const relative = (t: vscode.Uri): string => vscode.workspace.asRelativePath(t, false);
    // A folder leaves such files out; naming one (choosing it in the Explorer) asks first.
    const secret = targets.filter((t, i) => !folders[i] && isSecretPath(t.path));
    if (secret.length > 0 && !(await askSecret(secret.map(relative)))) return [];
    const [only] = targets;
    if (targets.length === 1 && only && !folders[0]) {
      const result = await naming(relative(only), this.client.request(ext.addFile, { uri: only.toString(), pin }));
      report([result]);
      return [result.item];
    }
    // Folders and several files are one set: the server plans it whole, and says when it would
    // evict more than half of the window (then, and only then, the person is asked).
    const what = describeTargets(targets.map((t, i) => ({ path: relative(t), folder: folders[i] ?? false })));
    const workspace = workspaceUri();
    const files = nonEmptyTargets(targets.map((t) => ({ uri: t.toString() })));
    const result = await addAsAWhole(
      (params) => this.client.request(ext.addFiles, params),
      async (question, plan) => {
        const yes = await askModal(question, 'Keep the Window');
        if (yes) consentTo(plan.evicted.map((i) => i.id));
        return yes;
      },
      { workspace, targets: files, pin },
      what,
    );
    if (!result) return [];
    const { summary, problems, warn } = addReport(result, what);
    note(summary);
    if (warn) void vscode.window.showWarningMessage(problems ? `${summary}. Not added:\n${problems}` : summary);
    return result.items;
  }

  /**
   * The definition at the cursor, by its name: the server parses the file (as this editor has it)
   * and keeps the definition by its qualified name, so it follows its name when code moves. A
   * language the server does not parse falls back to this editor's symbol provider (a region).
   */
  async addSymbol(): Promise<ContextItem> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) throw new UserError('Open a file and put the cursor in a symbol to add it.');
    const doc = editor.document;
    const at = editor.selection.active;
    if (isFile(doc)) {
      const found = await this.symbolAt(doc, at);
      if (found.symbol) {
        const result = await this.addByName(found.symbol, doc.languageId, false);
        report([result]);
        return result.item;
      }
      if (found.language) throw new UserError(`No definition here: ${found.reason ?? 'the server found none'}.`);
    }
    return this.addSymbolOfEditor(editor, at);
  }

  private async symbolAt(doc: vscode.TextDocument, at: vscode.Position): Promise<SymbolAtResult> {
    return this.client.request(ext.symbolAt, {
      workspace: workspaceUri(),
      uri: doc.uri.toString(),
      position: { line: at.line, character: at.character },
    });
  }

  private async addByName(symbol: SymbolInfo, language: string, outline: boolean): Promise<AddResult> {
    return naming(
      `${symbol.path}:${String(symbol.startLine)}-${String(symbol.endLine)} (${symbol.name})`,
      this.client.request(ext.addSymbolByName, { workspace: workspaceUri(), uri: symbol.uri, name: symbol.name, language, outline }),
    );
  }

  /**
   * A file, or the class at the cursor, as its outline: signatures and the first line of each
   * docstring, every body one `…` line. From the Explorer: the files chosen there.
   */
  async addOutline(uri: unknown, uris: unknown): Promise<ContextItem[]> {
    const chosen = Array.isArray(uris) ? uris.filter((u): u is vscode.Uri => u instanceof vscode.Uri) : uri instanceof vscode.Uri ? [uri] : [];
    const editor = vscode.window.activeTextEditor;
    if (chosen.length === 0 && editor && isFile(editor.document)) {
      const doc = editor.document;
      const found = await this.symbolAt(doc, editor.selection.active);
      if (found.symbol && CONTAINERS.has(found.symbol.kind)) {
        const result = await this.addByName(found.symbol, doc.languageId, true);
        report([result]);
        return [result.item];
      }
      chosen.push(doc.uri);
    }
    if (chosen.length === 0) throw new UserError('Open a file, or choose files in the Explorer, to add as outlines.');
    const results: AddResult[] = [];
    for (const target of chosen) {
      const relative = vscode.workspace.asRelativePath(target, false);
      results.push(await naming(relative, this.client.request(ext.addFile, { uri: target.toString(), outline: true })));
    }
    report(results);
    return results.map((r) => r.item);
  }

  /** A map of the folder's definitions, ranked for the words asked (or the window's code). */
  async addMap(given: unknown): Promise<ContextItem | undefined> {
    folderOrThrow();
    let query = typeof given === 'string' ? given : undefined;
    if (query === undefined) {
      query = await vscode.window.showInputBox({
        title: 'contextls: Add Map of the Folder',
        prompt: 'The definitions the window\'s code uses come first, then those these words name; each as the line that names it, no bodies.',
        placeHolder: 'Words to rank for (empty: the window\'s code)',
      });
      if (query === undefined) return undefined;
    }
    const words = query.trim();
    const result = await naming('the map', this.client.request(ext.addMap, { workspace: workspaceUri(), ...(words ? { query: words } : {}) }));
    report([result]);
    return result.item;
  }

  /** The definition this editor's symbol provider (or the enclosing block) finds: a region. */
  private async addSymbolOfEditor(editor: vscode.TextEditor, at: vscode.Position): Promise<ContextItem> {
    const doc = editor.document;
    const symbols = await vscode.commands.executeCommand<(vscode.DocumentSymbol | vscode.SymbolInformation)[] | undefined>(
      'vscode.executeDocumentSymbolProvider',
      doc.uri,
    );
    const found = innermostSymbol(symbols ?? [], at) ?? blockAt(doc, at.line);
    if (!found) {
      throw new UserError(
        `No symbol or block encloses line ${String(at.line + 1)} of ${path.basename(doc.fileName)}: select the lines and use "contextls: Add Selection".`,
      );
    }
    const range = toLsp(found.range);
    const text = doc.getText(found.range);
    const kind = typeof found.kind === 'string' ? found.kind : vscode.SymbolKind[found.kind];
    if (!isFile(doc)) {
      const result = await this.addUnsaved(doc, text, range, false, { name: found.name, kind });
      report([result], unsavedNote(doc));
      return result.item;
    }
    const where = `${vscode.workspace.asRelativePath(doc.uri, false)}:${lineSpan(range)} (${found.name})`;
    const result = await naming(
      where,
      this.client.request(ext.addSymbol, { uri: doc.uri.toString(), name: found.name, symbolKind: kind, range, text, language: doc.languageId }),
    );
    report([result], typeof found.kind === 'string' ? ' (the enclosing block: no symbol provider answered)' : '');
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
    const result = await naming(
      `the problems of ${relative}`,
      this.client.request(ext.addText, {
        workspace: workspaceUri(),
        kind: 'error',
        content: problemsText(relative, problems),
        metadata: { uri: doc.uri.toString(), path: relative, ...problemLines(problems), source: 'diagnostics' },
      }),
    );
    report([result]);
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
    const result = await naming(
      `the selection of the terminal "${terminal.name}"`,
      this.client.request(ext.addText, { workspace: workspaceUri(), kind: 'repl-history', content: text, metadata: { source: 'terminal', terminal: terminal.name } }),
    );
    report([result]);
    return result.item;
  }

  async addText(given: unknown): Promise<ContextItem | undefined> {
    let text = typeof given === 'string' ? given : undefined;
    folderOrThrow();
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
    const result = await naming('the text', this.client.request(ext.addText, { workspace: workspaceUri(), kind: 'text', content: text }));
    report([result]);
    return result.item;
  }
}

/** The kinds of definition that hold others: shown as an outline, their members' signatures. */
const CONTAINERS = new Set(['class', 'struct', 'interface', 'enum', 'trait', 'impl', 'module', 'namespace', 'union']);

/** The protocol's target list has at least one target (the schema's minItems). */
function nonEmptyTargets<T>(targets: readonly T[]): [T, ...T[]] {
  const [first, ...rest] = targets;
  if (first === undefined) throw new UserError('Nothing to add.');
  return [first, ...rest];
}

function isFile(doc: vscode.TextDocument): boolean {
  return doc.uri.scheme === 'file';
}

async function isFolder(uri: vscode.Uri): Promise<boolean> {
  try {
    return ((await vscode.workspace.fs.stat(uri)).type & vscode.FileType.Directory) !== 0;
  } catch {
    return false; // the server says what is wrong with it
  }
}

function unsavedNote(doc: vscode.TextDocument): string {
  return ` as code: ${path.basename(doc.fileName)} is not saved to a file, so the item keeps this text and does not follow later edits`;
}

/** What each add did: added, merged with items already there, or found there already. */
function report(results: readonly AddResult[], how = ''): void {
  note(`contextls: ${addedWords(results) || 'added nothing'}${how}`);
}

/** A refusal says what it refused: "big.txt: item has 21,129 tokens; the budget is 8,000". */
async function naming<T>(what: string, request: Promise<T>): Promise<T> {
  try {
    return await request;
  } catch (e) {
    if (e instanceof ServerError && !(e instanceof NotRunning) && !e.message.includes(what)) {
      throw new ServerError(`${what}: ${e.message}`, e.code, e.codeName, e.data);
    }
    throw e;
  }
}

/** "3" or "3-9": the 1-based lines of a range. */
function lineSpan(range: Range): string {
  const start = range.start.line + 1;
  const end = range.end.character === 0 && range.end.line > range.start.line ? range.end.line : range.end.line + 1;
  return start === end ? String(start) : `${String(start)}-${String(end)}`;
}

/** Files that usually hold credentials go to the model only when the person says so. */
async function askSecret(names: readonly string[]): Promise<boolean> {
  const [first] = names;
  const which = names.length === 1 && first ? first : `${String(names.length)} files (${names.join(', ')})`;
  const holds = names.length === 1 ? 'usually holds' : 'usually hold';
  return askModal(
    {
      message: `${which} ${holds} credentials (passwords, keys, tokens). Add ${names.length === 1 ? 'it' : 'them'} to the context a model will see?`,
      detail:
        'A folder add leaves such files out; choosing one by name adds it. What looks like a secret is warned about, and ' +
        '"Forget Item for Good" removes it from the window, the archive and the database file.',
      confirm: names.length === 1 && first ? `Add ${path.basename(first)}` : `Add ${String(names.length)} Files`,
    },
    "Don't Add",
  );
}

function toRange(range: Range): vscode.Range {
  return new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
}

function toLsp(range: vscode.Range): Range {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

type AnySymbol = vscode.DocumentSymbol | vscode.SymbolInformation;
interface Found {
  readonly name: string;
  /** A SymbolKind from a symbol provider, or the kind of block found from the text. */
  readonly kind: vscode.SymbolKind | BlockKind;
  readonly range: vscode.Range;
}

/** The innermost symbol whose range holds the position. */
function innermostSymbol(symbols: readonly AnySymbol[], at: vscode.Position): Found | undefined {
  let best: Found | undefined;
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

/** The enclosing block by indentation or braces, whole lines. */
function blockAt(doc: vscode.TextDocument, line: number): Found | undefined {
  const lines = Array.from({ length: doc.lineCount }, (_, i) => doc.lineAt(i).text);
  const block = enclosingBlock(lines, line, doc.languageId);
  if (!block) return undefined;
  const range = new vscode.Range(block.startLine, 0, block.endLine, doc.lineAt(block.endLine).text.length);
  return { name: block.name, kind: block.kind, range };
}
