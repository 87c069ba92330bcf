// The status bar item: the budget of the current folder's window, from status pushes; in words
// for screen readers. It shows once contextls is in use in this VS Code window: a folder with a
// window, or a person's first command.
import * as vscode from 'vscode';
import type { ContextClient } from './client';
import type { Status } from './generated/protocol';
import { isWarning, statusAccessibilityLabel, statusText, statusTooltip } from './format';
import { currentFolder, type WindowModel } from './model';
import { hasWindow } from './startupRules';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('contextls.status', vscode.StatusBarAlignment.Left, 100);
  private readonly subscriptions: vscode.Disposable[];
  private shown = false;

  constructor(
    private readonly model: WindowModel,
    private readonly client: ContextClient,
  ) {
    this.item.name = 'contextls';
    this.item.command = 'contextls.items.focus';
    this.subscriptions = [
      model.onDidChangeStatus((s) => {
        this.show(s);
      }),
      client.onUsed(() => {
        this.show(this.model.status);
      }),
    ];
  }

  private show(status: Status | undefined): void {
    if (!this.shown) {
      if (!this.client.used && !(status && hasWindow(status))) return;
      this.shown = true;
      this.item.show();
    }
    if (!status) {
      this.item.text = '$(library) contextls: not running';
      this.item.tooltip = 'contextls: the server is not running. Click for what to do (the contextls view).';
      this.item.accessibilityInformation = { label: 'contextls: the server is not running', role: 'button' };
      this.item.backgroundColor = undefined;
      return;
    }
    this.item.text = statusText(status);
    const tooltip = new vscode.MarkdownString(statusTooltip(status, currentFolder()?.name));
    tooltip.supportThemeIcons = false;
    this.item.tooltip = tooltip;
    this.item.accessibilityInformation = { label: statusAccessibilityLabel(status), role: 'button' };
    this.item.backgroundColor = isWarning(status) ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}
