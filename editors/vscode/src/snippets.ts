// A search hit's snippet as one line a tree row can show, with the server's highlights moved
// along. The server counts offsets in Unicode code points; JavaScript strings (and VS Code's
// TreeItemLabel highlights) count UTF-16 code units, so a character outside the BMP shifts them.

export type Span = readonly [number, number];

/** `[start, end)` code point spans of `text` as UTF-16 spans; out-of-range ones are clamped. */
export function utf16Spans(text: string, spans: readonly Span[]): [number, number][] {
  // utf16At[i]: where code point i starts, in UTF-16 units (one more entry: the end)
  const utf16At: number[] = [];
  let unit = 0;
  for (const cp of text) {
    utf16At.push(unit);
    unit += cp.length;
  }
  utf16At.push(unit);
  const last = utf16At.length - 1;
  const at = (i: number): number => utf16At[Math.max(0, Math.min(i, last))] ?? unit;
  return spans.filter(([s, e]) => e > s).map(([s, e]) => [at(s), at(e)] as [number, number]).filter(([s, e]) => e > s);
}

/**
 * The snippet on one line (every run of whitespace, newlines included, becomes one space; the
 * ends are trimmed), with its code point highlights as UTF-16 spans of the new text.
 */
export function flatSnippet(snippet: string, highlights: readonly Span[]): { text: string; highlights: [number, number][] } {
  const spans = utf16Spans(snippet, highlights);
  // newAt[i]: the offset in the flat text of UTF-16 offset i of the snippet
  const newAt: number[] = [];
  let text = '';
  let pendingSpace = false;
  for (let i = 0; i < snippet.length; i++) {
    const ch = snippet.charAt(i);
    if (/\s/.test(ch)) {
      if (text.length > 0) pendingSpace = true;
      // where the one space goes: a span ending here ends before it
      newAt.push(text.length);
      continue;
    }
    if (pendingSpace) {
      text += ' ';
      pendingSpace = false;
    }
    newAt.push(text.length);
    text += ch;
  }
  newAt.push(text.length);
  const map = (i: number): number => Math.min(newAt[i] ?? text.length, text.length);
  return {
    text,
    highlights: spans.map(([s, e]) => [map(s), map(e)] as [number, number]).filter(([s, e]) => e > s),
  };
}

/**
 * The text from a little before its first highlight (with "…" for what is cut), so a narrow row
 * shows the match; the highlights move along.
 */
export function fromFirstHighlight(text: string, highlights: readonly [number, number][], before = 24): { text: string; highlights: [number, number][] } {
  const first = Math.min(...highlights.map(([s]) => s));
  if (!Number.isFinite(first) || first <= before) return { text, highlights: [...highlights] };
  // cut at a space, so no word is split
  const space = text.lastIndexOf(' ', first - before);
  const cut = space >= 0 ? space + 1 : first - before;
  const shift = cut - 1; // "…" takes one unit
  return { text: `…${text.slice(cut)}`, highlights: highlights.map(([s, e]) => [s - shift, e - shift] as [number, number]) };
}
