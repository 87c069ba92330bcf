// Pure formatting of diagnostics into the text of an `error` context item.

export interface ProblemLike {
  /** 0-based line and UTF-16 character of the diagnostic's start. */
  readonly line: number;
  readonly character: number;
  /** 0 error, 1 warning, 2 information, 3 hint (vscode.DiagnosticSeverity). */
  readonly severity: number;
  readonly message: string;
  readonly source?: string | undefined;
  readonly code?: string | number | undefined;
}

const SEVERITY = ['error', 'warning', 'info', 'hint'];

/** `path:line:col: severity: message [source code]`, one per diagnostic, 1-based positions. */
export function problemsText(path: string, problems: readonly ProblemLike[]): string {
  return [...problems]
    .sort((a, b) => a.line - b.line || a.character - b.character)
    .map((p) => {
      const origin = [p.source, p.code === undefined ? undefined : String(p.code)].filter(Boolean).join(' ');
      return `${path}:${p.line + 1}:${p.character + 1}: ${SEVERITY[p.severity] ?? 'error'}: ${p.message}` +
        (origin ? ` [${origin}]` : '');
    })
    .join('\n');
}

/** The 1-based lines the diagnostics cover, for the item's metadata. */
export function problemLines(problems: readonly ProblemLike[]): { startLine: number; endLine: number } | undefined {
  if (problems.length === 0) return undefined;
  const lines = problems.map((p) => p.line + 1);
  return { startLine: Math.min(...lines), endLine: Math.max(...lines) };
}
