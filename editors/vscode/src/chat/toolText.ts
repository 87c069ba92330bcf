// What the language-model tools take and give, as text for a model. Pure.
import type { CacheBreakpoint, RenderParams, SearchResult } from '../generated/protocol';
import { archiveReason, grouped } from '../format';
import { foundBy } from '../settings';

export interface ContextToolInput {
  readonly maxTokens?: number;
  readonly query?: string;
  readonly folder?: string;
}

export interface SearchToolInput {
  readonly query: string;
  readonly limit?: number;
  readonly folder?: string;
}

/** The render request for the context tool: markdown, within `maxTokens`, and what `query` finds. */
export function contextRenderParams(input: ContextToolInput, workspace: string): RenderParams {
  const params: RenderParams = { workspace, format: 'markdown' };
  if (typeof input.maxTokens === 'number' && input.maxTokens >= 1) params.maxTokens = Math.floor(input.maxTokens);
  if (typeof input.query === 'string' && input.query.trim() !== '') params.query = input.query.trim();
  return params;
}

/**
 * The render cut where its stable parts end (after the pinned items, before the newest, at the
 * end): one text part each, joined the render again. VS Code's API has no prompt-cache marker for
 * a tool's result; a host that caches by part keeps the parts before the first that changed.
 */
export function partsAtBreakpoints(text: string, breakpoints: readonly CacheBreakpoint[]): string[] {
  const cuts = [...new Set(breakpoints.map((b) => b.utf16Offset))].filter((n) => n > 0 && n < text.length).sort((a, b) => a - b);
  const parts: string[] = [];
  let start = 0;
  for (const cut of cuts) {
    parts.push(text.slice(start, cut));
    start = cut;
  }
  parts.push(text.slice(start));
  return parts;
}

/** A fence longer than any run of backticks in the text. */
export function fenceFor(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return '`'.repeat(Math.max(3, longest + 1));
}

const HIT_CHARS = 4000;

/** The archive search's hits for a model: each with its id, why it left, and its text. */
export function searchToolText(query: string, result: SearchResult): string {
  if (result.hits.length === 0) return `No archived item matches "${query}".${result.warning ? ` (${result.warning})` : ''}`;
  const lines = [`${result.hits.length} archived item${result.hits.length === 1 ? '' : 's'} match "${query}" (${result.mode} search):`, ''];
  for (const hit of result.hits) {
    const { item } = hit;
    const text = item.content.length > HIT_CHARS ? `${item.content.slice(0, HIT_CHARS)}\n…` : item.content;
    const language = typeof item.metadata.language === 'string' ? item.metadata.language : '';
    const fence = fenceFor(text);
    lines.push(
      `### ${item.id}: ${item.label}`,
      `${archiveReason(hit.reason)}; ${grouped(item.tokens)} tokens; found by ${foundBy(hit.modes)}` +
        (text !== item.content ? '; shortened here, restore it for the whole text' : ''),
      '',
      `${fence}${language}`,
      text,
      fence,
      '',
    );
  }
  lines.push('The user can bring an item back into the context window with "contextls: Restore from Archive".');
  return lines.join('\n');
}
