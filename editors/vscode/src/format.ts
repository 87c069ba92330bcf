// Pure formatting of what the server reports: status bar text and tooltip, eviction messages,
// error names. No `vscode` import, so the unit tests run it under plain node.
import { ErrorCodes, type ErrorCodeName, type ItemSummary, type Status } from './generated/protocol';

/** The token budget's share at which the status bar turns to its warning colour. */
export const WARNING_PERCENT = 90;

/** 12345 -> "12,345". */
export const grouped = (n: number): string => n.toLocaleString('en-US');

/** 950 -> "950", 3200 -> "3.2k", 8000 -> "8k", 12345 -> "12.3k", 150000 -> "150k", 2500000 -> "2.5M". */
export function formatCount(n: number): string {
  const scaled = (value: number, unit: string): string => {
    const text = value >= 100 ? Math.round(value).toString() : (Math.round(value * 10) / 10).toString();
    return text + unit;
  };
  if (n < 1000) return Math.round(n).toString();
  // from 999,500 on, "1000k" would show: say "1M"
  if (n < 999_500) return scaled(n / 1000, 'k');
  return scaled(n / 1_000_000, 'M');
}

/** The token budget the window keeps to now: the adaptive one, else `maxTokens`. */
export function budgetOf(status: Pick<Status, 'budget' | 'maxTokens'>): number {
  return status.budget > 0 ? status.budget : status.maxTokens;
}

/** The status bar text, with its units and the model they count in: `$(library) 3.2k/8k gpt-4o tokens · 12/50 items`;
 * `~` before the counts when the model's are an estimate. */
export function statusText(status: Status): string {
  const about = status.countExact ? '' : '~';
  return `$(library) ${about}${formatCount(status.tokens)}/${formatCount(budgetOf(status))} ${modelOf(status)} tokens · ${status.itemCount}/${status.maxItems} items`;
}

/** The model whose tokens the window counts: `claude-opus-4.7`. */
export function modelOf(status: Pick<Status, 'model' | 'encoding'>): string {
  return status.model || status.encoding;
}

/** What a screen reader says for the status item: words, no markdown, no abbreviations. */
export function statusAccessibilityLabel(status: Status): string {
  const parts = [
    `${grouped(status.tokens)} of ${grouped(budgetOf(status))} ${modelOf(status)} tokens, ${status.countExact ? 'exact' : 'estimated'} (${formatPercent(status.percent)})`,
    `${status.itemCount} of ${status.maxItems} items`,
  ];
  if (status.pinnedCount > 0) parts.push(`${status.pinnedCount} pinned`);
  if (status.outlinedCount > 0) parts.push(`${status.outlinedCount} shown as outlines`);
  if (status.mapCount > 0) parts.push(`${status.mapCount} ${status.mapCount === 1 ? 'map' : 'maps'}`);
  if (status.staleCount > 0) parts.push(`${status.staleCount} stale`);
  if (status.budgetPolicy === 'adaptive') parts.push(`adaptive budget for ${taskWords(status.task)}`);
  const next = status.nextEviction ? `. Next to be evicted: ${status.nextEviction.label}` : '';
  return `contextls: ${parts.join(', ')}${next}`;
}

/** Why the adaptive budget is what it is: "adaptive: debugging, complexity 0.72 → 14.0k of base 8k". */
export function adaptiveReason(status: Status): string | undefined {
  if (status.budgetPolicy !== 'adaptive') return undefined;
  const budget = `${(budgetOf(status) / 1000).toFixed(1)}k`;
  return `adaptive: ${taskWords(status.task)}, complexity ${status.complexity.toFixed(2)} → ${budget} of base ${formatCount(status.maxTokens)}`;
}

/** `complex_analysis` -> `complex analysis`. */
export function taskWords(task: string): string {
  return task.replace(/_/g, ' ');
}

export function isWarning(status: Status): boolean {
  return status.percent >= WARNING_PERCENT;
}

/** Backslash-escapes markdown's special characters so labels render as written. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, (c) => '\\' + c);
}

function summary(item: ItemSummary): string {
  return `${escapeMarkdown(item.label)} (${grouped(item.tokens)} tokens)`;
}

/** The status bar tooltip (markdown): the budget, what goes next, what went last. */
export function statusTooltip(status: Status, workspaceName?: string): string {
  const lines = [
    `**contextls**${workspaceName ? ` · ${escapeMarkdown(workspaceName)}` : ''}`,
    '',
    `Budget: ${grouped(status.tokens)} / ${grouped(budgetOf(status))} tokens (${formatPercent(status.percent)}) · ` +
      `${status.itemCount} / ${status.maxItems} items`,
    '',
    `Pinned ${status.pinnedCount} · stale ${status.staleCount} · outlined ${status.outlinedCount} · maps ${status.mapCount} · ` +
      `archived ${status.archivedCount} · evicted so far ${status.evictedTotal}`,
    '',
    `Next to be evicted: ${status.nextEviction ? summary(status.nextEviction) : 'nothing (empty, or all pinned)'}`,
  ];
  const adaptive = adaptiveReason(status);
  if (adaptive !== undefined) lines.splice(3, 0, '', escapeMarkdown(adaptive));
  // A budget in another model's tokens, or an estimate, says so: the figures above are in them.
  lines.splice(3, 0, '', `Tokens of ${escapeMarkdown(modelOf(status))}: ${escapeMarkdown(status.countLabel)}`);
  // What a model's prompt cache keeps of what is sent: the share of the last render that
  // repeated the one before byte for byte, and what the next request sends past it.
  if (status.cache) {
    lines.push(
      '',
      `Prompt cache: prefix kept ${Math.round(status.cache.kept * 100)}% of the last render; ` +
        `the next sends ~${grouped(status.cache.nextUncached)} tokens past it`,
    );
  }
  if (status.lastEvicted.length > 0) {
    lines.push('', 'Last evicted:', '');
    for (const item of status.lastEvicted) lines.push(`- ${summary(item)}`);
  }
  if (status.warnings.length > 0) {
    lines.push('', 'Warnings:', '');
    for (const warning of status.warnings) lines.push(`- ${escapeMarkdown(warning)}`);
  }
  return lines.join('\n');
}

export function formatPercent(percent: number): string {
  return `${percent >= 10 ? Math.round(percent).toString() : (Math.round(percent * 10) / 10).toString()} %`;
}

const EVICTION_LIMITS: Record<string, string> = {
  maxItems: 'the item limit',
  maxTokens: 'the token budget',
  budget: 'the adaptive budget, which shrank',
};

/** The notification text for a `contextls/didEvict`: names every evicted item (up to a few). */
export function evictionMessage(items: readonly { label: string; tokens: number }[], reason: string, shown = 5): string {
  const why = EVICTION_LIMITS[reason] ?? reason;
  const names = items.slice(0, shown).map((i) => `${i.label} (${grouped(i.tokens)} tokens)`);
  const more = items.length > shown ? ` and ${items.length - shown} more` : '';
  const noun = items.length === 1 ? 'item' : 'items';
  return `contextls evicted ${items.length} ${noun} to stay within ${why}: ${names.join(', ')}${more}.`;
}

const ARCHIVE_REASONS: Record<string, string> = {
  maxItems: 'evicted at the item limit',
  maxTokens: 'evicted at the token budget',
  budget: 'evicted when the adaptive budget shrank',
  removed: 'removed by hand',
  cleared: 'cleared with the window',
};

/** Why an archived item left the window, in words ("evicted at the token budget"). */
export function archiveReason(reason: string): string {
  return ARCHIVE_REASONS[reason] ?? reason;
}

/** How long ago, roughly: "just now", "5 min ago", "3 h ago", "2 days ago". */
export function timeAgo(at: number, now: number): string {
  const minutes = Math.floor((now - at) / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} days ago`;
}

/** The name (from the schema's x-errorCodes) of a JSON-RPC error code, if it is one of ours. */
export function errorName(code: number): ErrorCodeName | undefined {
  for (const [name, value] of Object.entries(ErrorCodes)) {
    if (value === code) return name as ErrorCodeName;
  }
  return undefined;
}

/** `~/x` -> `<home>/x` (VS Code settings are not expanded by a shell). */
export function expandHome(program: string, home: string): string {
  if (program === '~') return home;
  return program.startsWith('~/') ? home.replace(/\/+$/, '') + program.slice(1) : program;
}

/**
 * Splits a command line setting into program and arguments, honouring single and double
 * quotes and backslash escapes (no other shell syntax): `"/my dir/contextls" serve`.
 */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let started = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line.charAt(i);
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word += line.charAt(++i);
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      started = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line.charAt(++i);
      started = true;
    } else if (/\s/.test(c)) {
      if (started) words.push(word);
      word = '';
      started = false;
    } else {
      word += c;
      started = true;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} in command: ${line}`);
  if (started) words.push(word);
  return words;
}
