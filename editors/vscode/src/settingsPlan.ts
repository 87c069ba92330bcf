// What a change of window settings would evict, as the server plans it: a dry run of the change
// answers with what it would evict or, past the bulk add's threshold (more than half of the
// window), is refused with NEEDS_FORCE, whose data is the same plan. The server decides which
// items go (its eviction policy, an adaptive budget): nothing of that is worked out here. No
// `vscode` import: the unit tests run it under plain node.
import type { ConfigureResult, ContextItem } from './generated/protocol';
import { grouped } from './format';
import { mostOfTheWindow, type Held } from './planned';
import type { WindowKey } from './settings';

/** What a change of settings would do to a window: the items it would evict, and whether to ask. */
export interface SettingsPlan {
  readonly evicted: readonly ContextItem[];
  readonly held: Held;
  /** It would evict more than half of the window: the server wants it sent with `force`. */
  readonly asks: boolean;
  /** The server would refuse it (a budget too small for anything): why, in its words. */
  readonly refused?: string;
}

/** A change the server's dry run refused outright (not for want of consent). */
export function refusedPlan(message: string): SettingsPlan {
  return { evicted: [], held: { items: 0, tokens: 0 }, asks: false, refused: message };
}

/** The plan in the server's answer to a dry run (`asks` when it came as NEEDS_FORCE's data). */
export function settingsPlanOf(planned: ConfigureResult, asks: boolean): SettingsPlan {
  return { evicted: planned.evicted, held: { items: planned.status.itemCount, tokens: planned.status.tokens }, asks };
}

/** The planned change of settings a NEEDS_FORCE error carries, when it carries one. */
export function plannedSettings(data: unknown): ConfigureResult | undefined {
  const d = data as Partial<ConfigureResult> | undefined;
  return d && d.settings && Array.isArray(d.evicted) && d.status ? (d as ConfigureResult) : undefined;
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
