// Entry point: wires the client, the model, the status bar, the items view, the highlights and
// the commands together. Each lives in its own module with one job.
import * as vscode from 'vscode';
import { ContextClient, SERVER_COMMAND_SETTING } from './client';
import { announceEviction, Commands } from './commands';
import { Highlights } from './decorations';
import { ItemsView } from './itemsView';
import { WindowModel } from './model';
import { StatusBar } from './status';

let client: ContextClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('contextls', { log: true });
  client = new ContextClient(output);
  const model = new WindowModel(client);
  const view = new ItemsView(model);
  const c = client;
  context.subscriptions.push(
    output,
    client,
    model,
    new StatusBar(model),
    view,
    new Highlights(model),
    ...new Commands(client, model, () => view.selection).register(),
    client.onEvict((e) => void announceEviction(c, e.workspace, e.items, e.reason)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      // A new command or database means a new server; other settings apply live.
      if (
        e.affectsConfiguration(SERVER_COMMAND_SETTING) ||
        e.affectsConfiguration('contextls.server.shared') ||
        e.affectsConfiguration('contextls.storage')
      )
        void c.restart();
      else if (e.affectsConfiguration('contextls')) void c.sendSettings();
    }),
  );
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
