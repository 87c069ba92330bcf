// What a change of window settings would evict, worked out before it is sent: the window keeps
// its items chronologically and, under the fifo policy, evicts the oldest unpinned ones until it
// is within its limits again. Under the relevance policy the server chooses other items, but as
// many tokens must go, so the count and the tokens (what the question is about) still hold. No
// `vscode` import: the unit tests run it under plain node.
import type { ContextItem, Status, WindowSettings } from './generated/protocol';
import { grouped } from './format';
import { evictsMostOf, mostOfTheWindow, type Held } from './planned';
import type { WindowKey } from './settings';

/** The limits a window keeps to: its most items and its token budget. */
export interface Limits {
  readonly maxItems: number;
  readonly budget: number;
}

/** The part of an item the plan reads. */
export type Planned = Pick<ContextItem, 'id' | 'label' | 'tokens' | 'pinned' | 'timestamp'>;

/** The items the window would evict to fit `limits`: the oldest unpinned first. */
export function evictedToFit<T extends Planned>(items: readonly T[], limits: Limits): T[] {
  const oldestFirst = [...items].sort((a, b) => a.timestamp - b.timestamp || idNumber(a.id) - idNumber(b.id));
  let count = items.length;
  let tokens = items.reduce((sum, i) => sum + i.tokens, 0);
  const evicted: T[] = [];
  for (const item of oldestFirst) {
    if (count <= limits.maxItems && tokens <= limits.budget) break;
    if (item.pinned) continue;
    evicted.push(item);
    count -= 1;
    tokens -= item.tokens;
  }
  return evicted;
}

const TASK_MULTIPLIERS: Record<WindowSettings['task'], number> = {
  general: 1,
  coding: 1.5,
  debugging: 2,
  research: 1.3,
  complex_analysis: 2.5,
};

/**
 * The budget the window would keep to under `settings`: `maxTokens` when fixed; when adaptive,
 * the target the server steers to (base × task × (0.5 + 2.5 × complexity), between half and four
 * times the base, under the ceiling).
 */
export function budgetUnder(settings: Pick<WindowSettings, 'maxTokens' | 'budgetPolicy' | 'task' | 'budgetCeiling'>, complexity: number): number {
  if (settings.budgetPolicy !== 'adaptive') return settings.maxTokens;
  const base = settings.maxTokens;
  const most = settings.budgetCeiling > 0 ? Math.min(settings.budgetCeiling, 4 * base) : 4 * base;
  const target = base * TASK_MULTIPLIERS[settings.task] * (0.5 + 2.5 * complexity);
  return Math.round(Math.min(most, Math.max(base / 2, target)));
}

/** What a change of settings would do to a window: the items it would evict, and whether to ask. */
export interface SettingsPlan<T extends Planned = Planned> {
  readonly evicted: T[];
  readonly held: Held;
  /** It would evict more than half of the window: the same threshold as a bulk add. */
  readonly asks: boolean;
}

/** The plan for `after` (the window's settings with the change in), from the window as it is. */
export function settingsPlan<T extends Planned>(items: readonly T[], status: Pick<Status, 'complexity'>, after: WindowSettings): SettingsPlan<T> {
  const evicted = evictedToFit(items, { maxItems: after.maxItems, budget: budgetUnder(after, status.complexity) });
  const held = { items: items.length, tokens: items.reduce((sum, i) => sum + i.tokens, 0) };
  return { evicted, held, asks: evictsMostOf(evicted, held) };
}

/**
 * "maxTokens to 3", "maxTokens to 3 and maxItems to 2", "maxTokens to 8,000 (its default)": the
 * Settings UI removes a value typed equal to the default, which reaches the window as a reset.
 */
export function changeWords(settings: Partial<Record<WindowKey, unknown>>, reset: readonly WindowKey[], defaultOf: (key: WindowKey) => unknown = () => undefined): string {
  const shown = (value: unknown): string => (typeof value === 'number' ? grouped(value) : String(value));
  const set = Object.entries(settings).map(([key, value]) => `${key} to ${shown(value)}`);
  const back = reset.map((key) => {
    const value = defaultOf(key);
    return value === undefined || value === '' ? `${key} back to its default` : `${key} to ${shown(value)} (its default)`;
  });
  const all = [...set, ...back];
  return all.length <= 1 ? (all[0] ?? 'nothing') : `${all.slice(0, -1).join(', ')} and ${all.at(-1) ?? ''}`;
}

/** The sentence before a change of settings that would evict more than half of the window. */
export function settingsQuestion(plan: SettingsPlan, words: string): string {
  return mostOfTheWindow(`Setting ${words}`, plan.evicted, plan.held.items);
}

function idNumber(id: string): number {
  const n = Number(/^ctx-(\d+)$/.exec(id)?.[1]);
  return Number.isFinite(n) ? n : 0;
}
