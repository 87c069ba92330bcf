// The Show Context tab comes back after a reload. VS Code restores the tabs of files, not those of
// a document an extension provides, so the extension remembers the rendered windows that are open
// (and in which column) and opens them again when it starts, as they were.
import * as vscode from 'vscode';
import { SCHEME, isContextUri } from './contextDocs';

const OPEN_KEY = 'contextls.openContextTabs';

interface OpenTab {
  readonly uri: string;
  readonly column: vscode.ViewColumn;
}

export class ShowContextTab implements vscode.Disposable {
  private readonly subscription: vscode.Disposable;

  constructor(private readonly state: vscode.Memento) {
    const remembered = state.get<OpenTab[]>(OPEN_KEY, []);
    const open = new Set(contextTabs().map((t) => t.uri));
    void this.reopen(remembered.filter((t) => !open.has(t.uri)));
    this.subscription = vscode.window.tabGroups.onDidChangeTabs(() => {
      void this.state.update(OPEN_KEY, contextTabs());
    });
  }

  private async reopen(tabs: readonly OpenTab[]): Promise<void> {
    for (const tab of tabs) {
      try {
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(tab.uri));
        await vscode.window.showTextDocument(doc, { viewColumn: tab.column, preview: false, preserveFocus: true });
      } catch {
        // its folder is gone from this window: nothing to show
      }
    }
  }

  dispose(): void {
    this.subscription.dispose();
  }
}

/** The rendered windows open in tabs now, and their columns. */
function contextTabs(): OpenTab[] {
  return vscode.window.tabGroups.all.flatMap((group) =>
    group.tabs.flatMap((tab) =>
      tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === SCHEME && isContextUri(tab.input.uri)
        ? [{ uri: tab.input.uri.toString(), column: group.viewColumn }]
        : [],
    ),
  );
}
