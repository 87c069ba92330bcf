// The status bar item: the budget of the current folder's window, from status pushes; in words
// for screen readers.
import * as vscode from 'vscode';
import type { Status } from './generated/protocol';
import { isWarning, statusAccessibilityLabel, statusText, statusTooltip } from './format';
import { currentFolder, type WindowModel } from './model';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('contextls.status', vscode.StatusBarAlignment.Left, 100);
  private readonly subscription: vscode.Disposable;

  constructor(model: WindowModel) {
    this.item.name = 'contextls';
    this.item.command = 'contextls.items.focus';
    this.show(undefined);
    this.item.show();
    this.subscription = model.onDidChangeStatus((s) => {
      this.show(s);
    });
  }

  private show(status: Status | undefined): void {
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
    this.subscription.dispose();
    this.item.dispose();
  }
}
