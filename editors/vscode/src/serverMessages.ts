// What the server tells the person, shown here in this surface's words. Warnings come as data
// (contextls/didWarn): one that an item seems to hold a secret offers the extension's own
// Forget and Remove (not the command line's `contextls forget`), and the kinds found in one item
// make one notification. Anything else the server says in words (window/showMessage) is shown.
import * as vscode from 'vscode';
import { MessageType, type ShowMessageParams } from 'vscode-languageclient/node';
import type { ContextClient } from './client';
import type { DidWarnParams } from './generated/protocol';
import { secretNotice } from './serverWords';
import * as ext from './lsp_ext';

/** Warnings about one item that arrive together (one add, one scan) make one notification. */
const GATHER_MS = 250;

/** One item that seems to hold secrets: what the person knows it by, and the kinds found. */
interface Secrets {
  readonly workspace: string | undefined;
  readonly where: string;
  readonly kinds: string[];
}

export class ServerMessages implements vscode.Disposable {
  private readonly subscriptions: vscode.Disposable[];
  /** By item id. */
  private readonly secrets = new Map<string, Secrets>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly client: ContextClient) {
    this.subscriptions = [
      client.onMessage((message) => {
        this.show(message);
      }),
      client.onWarning((warning) => {
        this.warn(warning);
      }),
    ];
  }

  private show({ type, message }: ShowMessageParams): void {
    if (type === MessageType.Error) void vscode.window.showErrorMessage(message);
    else if (type === MessageType.Warning) void vscode.window.showWarningMessage(message);
    else void vscode.window.showInformationMessage(message);
  }

  private warn({ message, workspace, secret }: DidWarnParams): void {
    if (!secret) {
      void vscode.window.showWarningMessage(`contextls: ${message}`);
      return;
    }
    const gathered = this.secrets.get(secret.item) ?? { workspace: workspace ?? undefined, where: secret.where, kinds: [] };
    if (!gathered.kinds.includes(secret.found)) gathered.kinds.push(secret.found);
    this.secrets.set(secret.item, gathered);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.showSecrets();
    }, GATHER_MS);
  }

  private showSecrets(): void {
    const found = [...this.secrets];
    this.secrets.clear();
    for (const [id, secrets] of found) void this.offer(id, secrets);
  }

  private async offer(id: string, { workspace, where, kinds }: Secrets): Promise<void> {
    const forget = 'Forget for Good…';
    const remove = 'Remove from Window';
    const answer = await vscode.window.showWarningMessage(secretNotice(where, kinds), forget, remove);
    if (answer === undefined) return;
    if (!(await this.holds(workspace, id))) {
      void vscode.window.showInformationMessage(`contextls: ${where} is no longer in the window; "contextls: Search Archive" finds it in the archive.`);
      return;
    }
    await vscode.commands.executeCommand(answer === forget ? 'contextls.forget' : 'contextls.remove', id);
  }

  /** The window still holds the item (the person may have removed it meanwhile). */
  private async holds(workspace: string | undefined, id: string): Promise<boolean> {
    const { items } = await this.client.request(ext.list, workspace ? { workspace } : {});
    return items.some((i) => i.id === id);
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const subscription of this.subscriptions) subscription.dispose();
  }
}
