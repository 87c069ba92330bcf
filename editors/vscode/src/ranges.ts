// Pure range conversions between editor selections, LSP ranges and the 1-based line numbers the
// server keeps in item metadata. VS Code positions are already LSP positions (0-based lines,
// UTF-16 code units), so selections go to the server unchanged.
import type { ContextItem, Range } from './generated/protocol';

export interface PositionLike {
  readonly line: number;
  readonly character: number;
}
export interface SelectionLike {
  readonly start: PositionLike;
  readonly end: PositionLike;
}

export function isEmpty(selection: SelectionLike): boolean {
  return selection.start.line === selection.end.line && selection.start.character === selection.end.character;
}

/**
 * The LSP range a selection adds: the selection itself, or the whole current line when it is
 * empty (`lineLength` is that line's length in UTF-16 code units, as JavaScript counts).
 */
export function regionOf(selection: SelectionLike, lineLength: (line: number) => number): Range {
  if (isEmpty(selection)) {
    const line = selection.start.line;
    return { start: { line, character: 0 }, end: { line, character: lineLength(line) } };
  }
  return {
    start: { line: selection.start.line, character: selection.start.character },
    end: { line: selection.end.line, character: selection.end.character },
  };
}

/** 0-based, inclusive line span of an item in its file; undefined for whole files and text. */
export interface LineSpan {
  readonly uri: string;
  readonly startLine: number;
  readonly endLine: number;
}

const positiveInt = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : undefined;

/** Where an item lives in a file, from its metadata (`uri`, 1-based `startLine`/`endLine`). */
export function lineSpanOf(item: Pick<ContextItem, 'kind' | 'metadata'>): LineSpan | undefined {
  const uri = item.metadata.uri;
  if (typeof uri !== 'string' || item.kind === 'file') return undefined;
  const start = positiveInt(item.metadata.startLine);
  if (start === undefined) return undefined;
  const end = positiveInt(item.metadata.endLine) ?? start;
  return { uri, startLine: start - 1, endLine: Math.max(end, start) - 1 };
}

/** The file an item comes from (whole files and regions alike), if any. */
export function fileOf(item: Pick<ContextItem, 'metadata'>): string | undefined {
  const uri = item.metadata.uri;
  return typeof uri === 'string' ? uri : undefined;
}
