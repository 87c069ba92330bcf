// Entry point: wires the client, the model, the status bar, the views, the highlights, the
// documents, the commands and the chat together. Each lives in its own module with one job.
// VS Code activates it once startup has finished; the server starts only where it is needed: on
// first use (a command, its views, a `contextls:` document), or for a folder that has a window
// (Startup says which), so a VS Code window that never uses contextls runs no server.
import * as vscode from 'vscode';
import { registerChat } from './chat/register';
import { ContextClient, SERVER_COMMAND_SETTING } from './client';
import { announceEviction, registerCommands } from './commands';
import { ContextDocuments } from './contextDocs';
import { Highlights } from './decorations';
import { ItemsView } from './itemsView';
import { WindowModel } from './model';
import { SearchView } from './searchView';
import { ServerMessages } from './serverMessages';
import { SettingsDelivery } from './settingsDelivery';
import { ShowContextTab } from './showContextTab';
import { Startup } from './startup';
import { StatusBar } from './status';
import { WindowSettingsEditor } from './windowSettings';

let client: ContextClient | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('contextls', { log: true });
  client = new ContextClient(output);
  const c = client;
  const model = new WindowModel(client);
  const view = new ItemsView(model);
  const searchView = new SearchView();
  const docs = new ContextDocuments(client);
  const windowSettings = new WindowSettingsEditor(client);
  const delivery = new SettingsDelivery(client, output);
  const startup = new Startup(client, context.globalState, output);
  context.subscriptions.push(
    output,
    client,
    model,
    new StatusBar(model, client),
    view,
    searchView,
    docs,
    delivery,
    new Highlights(model),
    new ServerMessages(client),
    new ShowContextTab(context.workspaceState),
    ...registerCommands({
      client,
      model,
      docs,
      searchView,
      windowSettings,
      output,
      extensionUri: context.extensionUri,
      selectedItems: () => view.selection,
      focusedRows: () => view.focusedRows(),
    }),
    client.onEvict((e) => void announceEviction(c, e.workspace, e.items, e.reason)),
    client.onStatus((s) => {
      startup.remember(s);
    }),
    // The items view shown (by a click, or restored with the sidebar) is a use of contextls.
    view.onDidBecomeVisible(() => void c.start()),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      // A new command or database means a new server (first: the window settings go to it).
      if (
        e.affectsConfiguration(SERVER_COMMAND_SETTING) ||
        e.affectsConfiguration('contextls.server.shared') ||
        e.affectsConfiguration('contextls.storage')
      ) {
        if (c.running || c.used) await c.restart();
      }
      delivery.changed(e);
    }),
  );
  registerChat(client, context, output);
  if (view.visible) void client.start();
  else void startup.run();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
