// Every palette command, registered in one place: adding (addCommands), items (itemCommands),
// and here reading the window, searching the archive, the settings and the server itself. The
// server's answers (status, evictions) reach the status bar, the views and the highlights through
// the model, so commands only report errors and what they did.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { AddCommands } from './addCommands';
import type { ContextClient } from './client';
import { messageOf, note, showError, unasked, workspaceUri } from './commandKit';
import type { ContextDocuments } from './contextDocs';
import type { ContextItem } from './generated/protocol';
import { evictionMessage } from './format';
import { ItemCommands, restoreItems } from './itemCommands';
import * as ext from './lsp_ext';
import type { WindowModel } from './model';
import type { SearchView } from './searchView';
import { searchMode, searchPlaceholder } from './settings';
import type { WindowSettingsEditor } from './windowSettings';

export interface CommandParts {
  readonly client: ContextClient;
  readonly model: WindowModel;
  readonly docs: ContextDocuments;
  readonly searchView: SearchView;
  readonly windowSettings: WindowSettingsEditor;
  readonly output: vscode.OutputChannel;
  readonly extensionUri: vscode.Uri;
  readonly selectedItems: () => readonly ContextItem[];
  readonly focusedRows: () => Promise<readonly ContextItem[]>;
}

export function registerCommands(parts: CommandParts): vscode.Disposable[] {
  const items = new ItemCommands(parts.client, parts.model, parts.docs, parts.searchView, parts.selectedItems, parts.focusedRows);
  const commands: Record<string, (...args: unknown[]) => PromiseLike<unknown>> = {
    ...new AddCommands(parts.client).register(),
    ...items.register(),
    'contextls.showContext': () => items.showContext(),
    'contextls.copyContext': () => copyContext(parts.client),
    'contextls.search': (query) => search(parts, query),
    'contextls.windowSettings': () => parts.windowSettings.show(),
    'contextls.setTask': () => parts.windowSettings.show('task'),
    'contextls.setModel': () => parts.windowSettings.show('model'),
    'contextls.setCompaction': () => parts.windowSettings.show('compaction'),
    'contextls.restartServer': () => parts.client.restart(),
    'contextls.showOutput': () => {
      parts.output.show(true);
      return Promise.resolve();
    },
    'contextls.openSettings': () => vscode.commands.executeCommand('workbench.action.openSettings', '@ext:contextls.contextls'),
    'contextls.howToInstall': () => vscode.commands.executeCommand('markdown.showPreview', readmeOf(parts.extensionUri)),
  };
  return Object.entries(commands).map(([id, handler]) =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await handler(...args);
      } catch (e) {
        await showError(e);
        return undefined;
      }
    }),
  );
}

/** The extension's README (its install steps come first); vsce packs it as readme.md. */
function readmeOf(extensionUri: vscode.Uri): vscode.Uri {
  const packed = vscode.Uri.joinPath(extensionUri, 'readme.md');
  return fs.existsSync(packed.fsPath) ? packed : vscode.Uri.joinPath(extensionUri, 'README.md');
}

async function copyContext(client: ContextClient): Promise<void> {
  const { text } = await client.request(ext.render, { workspace: workspaceUri(), format: 'markdown' });
  await vscode.env.clipboard.writeText(text);
  note(`contextls: copied the context (${text.length.toLocaleString('en-US')} characters)`);
}

/** Asks for a query (the placeholder says how it will be searched), shows the hits in their view. */
async function search(parts: CommandParts, given: unknown): Promise<void> {
  const workspace = workspaceUri();
  const mode = searchMode(vscode.workspace.getConfiguration());
  let query = typeof given === 'string' ? given : undefined;
  if (query === undefined) {
    query = await vscode.window.showInputBox({
      title: 'contextls: Search the Archive',
      prompt: 'Evicted, removed and cleared items; the hits show in Archive Search, where Restore brings one back.',
      placeHolder: searchPlaceholder(mode, parts.client.info?.semantic?.available ?? false),
      value: parts.searchView.lastQuery,
      valueSelection: [0, parts.searchView.lastQuery.length],
    });
  }
  if (!query?.trim()) return;
  const result = await parts.client.request(ext.search, { workspace, query: query.trim(), limit: 50, mode });
  parts.docs.rememberArchived(result.hits.map((h) => h.item));
  await parts.searchView.show(query.trim(), result);
}

/**
 * The eviction notification: names the items and brings them back (the restore slides the window
 * like any add). A toast hides after a while and waits in the notification list; Restore from
 * Archive reaches the same items, and older ones, at any time.
 */
export async function announceEviction(client: ContextClient, workspace: string, evicted: readonly ContextItem[], reason: string): Promise<void> {
  const items = unasked(evicted);
  if (items.length === 0) return;
  const restore = items.length === 1 ? 'Restore It' : 'Restore Them';
  const archive = 'Restore from Archive…';
  const answer = await vscode.window.showInformationMessage(evictionMessage(items, reason), restore, archive);
  try {
    if (answer === restore) await restoreItems(client, workspace, items.map((i) => i.id));
    else if (answer === archive) await vscode.commands.executeCommand('contextls.restore');
  } catch (e) {
    await vscode.window.showErrorMessage(`contextls: ${messageOf(e)}`);
  }
}
