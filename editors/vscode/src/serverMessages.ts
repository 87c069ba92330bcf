// What the server tells the person (window/showMessage), shown here in this surface's words: a
// warning that an item seems to hold a secret offers the extension's own Forget and Remove (not
// the command line's `contextls forget`), and the kinds found in one item make one notification.
import * as vscode from 'vscode';
import { MessageType, type ShowMessageParams } from 'vscode-languageclient/node';
import type { ContextClient } from './client';
import { secretNotice, secretWarning } from './serverWords';
import * as ext from './lsp_ext';
import { currentFolder } from './model';

/** Warnings about one item that arrive together (one add, one scan) make one notification. */
const GATHER_MS = 250;

export class ServerMessages implements vscode.Disposable {
  private readonly subscription: vscode.Disposable;
  private readonly secrets = new Map<string, string[]>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly client: ContextClient) {
    this.subscription = client.onMessage((message) => {
      this.show(message);
    });
  }

  private show({ type, message }: ShowMessageParams): void {
    const secret = secretWarning(message);
    if (secret) {
      const kinds = this.secrets.get(secret.where) ?? [];
      if (!kinds.includes(secret.kind)) kinds.push(secret.kind);
      this.secrets.set(secret.where, kinds);
      clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        this.showSecrets();
      }, GATHER_MS);
      return;
    }
    if (type === MessageType.Error) void vscode.window.showErrorMessage(message);
    else if (type === MessageType.Warning) void vscode.window.showWarningMessage(message);
    else void vscode.window.showInformationMessage(message);
  }

  private showSecrets(): void {
    const found = [...this.secrets];
    this.secrets.clear();
    for (const [where, kinds] of found) void this.offer(where, kinds);
  }

  private async offer(where: string, kinds: readonly string[]): Promise<void> {
    const forget = 'Forget for Good…';
    const remove = 'Remove from Window';
    const answer = await vscode.window.showWarningMessage(secretNotice(where, kinds), forget, remove);
    if (answer === undefined) return;
    const id = await this.itemOf(where);
    if (id === undefined) {
      void vscode.window.showInformationMessage(`contextls: ${where} is no longer in the window; "contextls: Search Archive" finds it in the archive.`);
      return;
    }
    await vscode.commands.executeCommand(answer === forget ? 'contextls.forget' : 'contextls.remove', id);
  }

  /** The item a warning names: by its path, or "ctx-7 (text)". */
  private async itemOf(where: string): Promise<string | undefined> {
    const byId = /^(ctx-\d+) \(/.exec(where)?.[1];
    if (byId) return byId;
    const folder = currentFolder();
    if (!folder) return undefined;
    const { items } = await this.client.request(ext.list, { workspace: folder.uri.toString() });
    return [...items].reverse().find((i) => i.metadata.path === where || i.label === where)?.id;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.subscription.dispose();
  }
}
