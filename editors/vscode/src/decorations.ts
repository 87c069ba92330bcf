// Highlights: the ranges of the window's code items get a background, a bar in the gutter's
// edge and an overview ruler mark in every visible editor of their file; stale items look
// different (orange, a dashed bar). The colours are theme colours a theme can override.
import * as vscode from 'vscode';
import { lineSpanOf } from './ranges';
import type { WindowModel } from './model';

export class Highlights implements vscode.Disposable {
  private readonly fresh = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('contextls.regionBackground'),
    overviewRulerColor: new vscode.ThemeColor('contextls.regionOverviewRuler'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
    borderColor: new vscode.ThemeColor('contextls.regionOverviewRuler'),
    borderStyle: 'solid',
    borderWidth: '0 0 0 3px',
  });
  private readonly stale = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('contextls.staleRegionBackground'),
    overviewRulerColor: new vscode.ThemeColor('contextls.staleRegionOverviewRuler'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
    borderColor: new vscode.ThemeColor('contextls.staleRegionOverviewRuler'),
    borderStyle: 'dashed',
    borderWidth: '0 0 0 3px',
  });
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly model: WindowModel) {
    this.subscriptions = [
      model.onDidChangeItems(() => {
        this.paint(vscode.window.visibleTextEditors);
      }),
      vscode.window.onDidChangeVisibleTextEditors((editors) => {
        this.paint(editors);
      }),
    ];
    this.paint(vscode.window.visibleTextEditors);
  }

  private paint(editors: readonly vscode.TextEditor[]): void {
    const byFile = new Map<string, { fresh: vscode.Range[]; stale: vscode.Range[] }>();
    for (const item of this.model.items) {
      if (item.kind !== 'code') continue;
      const span = lineSpanOf(item);
      if (!span) continue;
      const file = fsPathOf(span.uri);
      if (file === undefined) continue;
      const ranges = byFile.get(file) ?? { fresh: [], stale: [] };
      byFile.set(file, ranges);
      (item.stale ? ranges.stale : ranges.fresh).push(new vscode.Range(span.startLine, 0, span.endLine, 0));
    }
    for (const editor of editors) {
      const ranges = byFile.get(editor.document.uri.fsPath);
      editor.setDecorations(this.fresh, ranges?.fresh ?? []);
      editor.setDecorations(this.stale, ranges?.stale ?? []);
    }
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.fresh.dispose();
    this.stale.dispose();
  }
}

function fsPathOf(uri: string): string | undefined {
  try {
    return vscode.Uri.parse(uri).fsPath;
  } catch {
    return undefined;
  }
}
