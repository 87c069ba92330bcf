// Entry point: wires the client, the model, the status bar, the views, the highlights, the
// documents, the commands and the chat together. Each lives in its own module with one job.
// VS Code activates it on its commands and views, on a `contextls:` document (a restored Show
// Context tab), and in a folder with a `.contextls` marker; only then does a server start.
import * as vscode from 'vscode';
import { registerChat } from './chat/register';
import { ContextClient, SERVER_COMMAND_SETTING } from './client';
import { announceEviction, registerCommands } from './commands';
import { ContextDocuments } from './contextDocs';
import { Highlights } from './decorations';
import { ItemsView } from './itemsView';
import { WindowModel } from './model';
import { SearchView } from './searchView';
import { StatusBar } from './status';
import { WindowSettingsEditor } from './windowSettings';

let client: ContextClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('contextls', { log: true });
  client = new ContextClient(output);
  const model = new WindowModel(client);
  const view = new ItemsView(model);
  const searchView = new SearchView();
  const docs = new ContextDocuments(client);
  const windowSettings = new WindowSettingsEditor(client);
  const c = client;
  context.subscriptions.push(
    output,
    client,
    model,
    new StatusBar(model),
    view,
    searchView,
    docs,
    windowSettings,
    new Highlights(model),
    ...registerCommands({
      client,
      model,
      docs,
      searchView,
      windowSettings,
      output,
      extensionUri: context.extensionUri,
      selectedItems: () => view.selection,
    }),
    client.onEvict((e) => void announceEviction(c, e.workspace, e.items, e.reason)),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      // A new command or database means a new server (first: the window settings go to it).
      if (
        e.affectsConfiguration(SERVER_COMMAND_SETTING) ||
        e.affectsConfiguration('contextls.server.shared') ||
        e.affectsConfiguration('contextls.storage')
      )
        await c.restart();
      await windowSettings.changed(e);
    }),
  );
  registerChat(client, context, output);
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
