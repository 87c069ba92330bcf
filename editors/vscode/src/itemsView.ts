// The items view (`contextls.items`): the window newest first, pinned items grouped on top.
import * as vscode from 'vscode';
import type { ContextItem } from './generated/protocol';
import { statusText } from './format';
import { groupsOf, type ItemGroup, type ItemRow } from './treeModel';
import type { WindowModel } from './model';

export type Node = { readonly group: ItemGroup } | { readonly row: ItemRow; readonly item: ContextItem };

export class ItemsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<Node>;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly model: WindowModel) {
    this.view = vscode.window.createTreeView('contextls.items', { treeDataProvider: this, canSelectMany: true });
    this.subscriptions.push(
      model.onDidChangeItems(() => {
        this.changed.fire(undefined);
      }),
      model.onDidChangeStatus((s) => {
        this.view.description = s ? statusText(s).replace('$(library) ', '') : undefined;
      }),
    );
  }

  /** The view is on screen. */
  get visible(): boolean {
    return this.view.visible;
  }

  /** The view came on screen. */
  onDidBecomeVisible(listener: () => void): vscode.Disposable {
    return this.view.onDidChangeVisibility((e) => {
      if (e.visible) listener();
    });
  }

  /**
   * The rows a key pressed in the view means: the selected ones when the focused row is one of
   * them, else the focused row (VS Code passes a key's command no row, and tells no focus; the
   * list's own Select command makes the focused row the selection, which then says).
   */
  async focusedRows(): Promise<readonly ContextItem[]> {
    const before = this.selection;
    // (no change comes when the focused row was the selection already: then a short wait is all)
    const changed = new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        subscription.dispose();
        resolve();
      };
      const timer = setTimeout(done, 250);
      const subscription = this.view.onDidChangeSelection(done);
    });
    await vscode.commands.executeCommand('list.select');
    await changed;
    const [now] = this.selection;
    if (now === undefined) return [];
    return before.some((i) => i.id === now.id) ? before : [now];
  }

  /** The items selected in the view (for commands run from its title or the palette). */
  get selection(): readonly ContextItem[] {
    return this.view.selection.flatMap((n) => ('item' in n ? [n.item] : []));
  }

  getChildren(node?: Node): Node[] {
    const byId = new Map(this.model.items.map((i) => [i.id, i]));
    const rowsOf = (group: ItemGroup): Node[] =>
      group.rows.flatMap((row) => {
        const item = byId.get(row.id);
        return item ? [{ row, item }] : [];
      });
    if (node) return 'group' in node ? rowsOf(node.group) : [];
    const groups = groupsOf(this.model.items);
    const [only] = groups;
    if (groups.length === 1 && only) return rowsOf(only);
    return groups.map((group) => ({ group }));
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if ('group' in node) {
      const t = new vscode.TreeItem(node.group.label, vscode.TreeItemCollapsibleState.Expanded);
      t.id = `group:${node.group.label.split(' ')[0] ?? ''}`;
      t.contextValue = 'contextls.group';
      return t;
    }
    const { row } = node;
    const t = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
    t.id = row.id;
    t.description = row.description;
    t.tooltip = row.tooltip;
    t.iconPath = new vscode.ThemeIcon(row.icon);
    t.contextValue = row.contextValue;
    t.accessibilityInformation = { label: row.accessibleLabel };
    t.command = { command: 'contextls.openItem', title: 'Open Item', arguments: [node] };
    return t;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.view.dispose();
    this.changed.dispose();
  }
}
