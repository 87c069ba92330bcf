// The window contract as the extension applies it: an explicit add of one thing and a restore
// slide the window (what they evict is announced, with a way back); a bulk add of folders or
// several files asks first only when the server says it would evict more than half of the
// window (NEEDS_FORCE, whose data is the plan), in the words the command line uses; a set that
// cannot fit is refused with the server's figures. No `vscode` import: the flow takes its
// requests and its question as functions, so the unit tests drive it against the contract.
import type { AddFilesParams, AddFilesResult, AddResult, ContextItem, NoRoomData, RestoreResult, SkippedFile } from './generated/protocol';
import { grouped } from './format';

/** A failed request as the flow sees it: the error's name from the schema and its data. */
export interface FailedRequest {
  readonly codeName: string | undefined;
  readonly data?: unknown;
  readonly message: string;
}

export function isFailedRequest(e: unknown): e is FailedRequest {
  return e instanceof Error && 'codeName' in e;
}

/** "1 token", "3,653 tokens". */
export const plural = (n: number, one: string, many = `${one}s`): string => `${grouped(n)} ${n === 1 ? one : many}`;

/** What a bulk add adds, for its question and report: "json/", "2 files", "2 files and a folder". */
export function describeTargets(targets: readonly { path: string; folder: boolean }[]): string {
  const [only] = targets;
  if (targets.length === 1 && only) return only.folder ? `${only.path}/` : only.path;
  const folders = targets.filter((t) => t.folder).length;
  const files = targets.length - folders;
  const part = (n: number, one: string, many: string): string => (n === 1 ? `a ${one}` : `${n} ${many}`);
  if (folders === 0) return `${files} files`;
  if (files === 0) return `${folders} folders`;
  return `${part(files, 'file', 'files')} and ${part(folders, 'folder', 'folders')}`;
}

/** A modal question: the message, the detail under it, and the button that goes ahead. */
export interface Question {
  readonly message: string;
  readonly detail: string;
  readonly confirm: string;
}

/** Labels of items, the first `shown` of them, then how many more. */
export function labelList(items: readonly Pick<ContextItem, 'label' | 'tokens'>[], shown = 8): string[] {
  const lines = items.slice(0, shown).map((i) => `• ${i.label} (${plural(i.tokens, 'token')})`);
  if (items.length > shown) lines.push(`• and ${items.length - shown} more`);
  return lines;
}

/** What the window held before a change: its items and their tokens. */
export interface Held {
  readonly items: number;
  readonly tokens: number;
}

/**
 * The one threshold for asking first (the server's, for a bulk add): making room takes more than
 * half of what the window held, by its items or by its tokens.
 */
export function evictsMostOf(evicted: readonly Pick<ContextItem, 'tokens'>[], held: Held): boolean {
  if (evicted.length === 0) return false;
  const tokens = evicted.reduce((sum, i) => sum + i.tokens, 0);
  return evicted.length * 2 > held.items || tokens * 2 > held.tokens;
}

/**
 * The sentence every surface says before an eviction of more than half of the window (the
 * command line's words): "Adding lib/ (3 files, 2,000 tokens) would evict 4 of the window's 6
 * items (1,200 tokens), more than half of it."
 */
export function mostOfTheWindow(doing: string, evicted: readonly Pick<ContextItem, 'tokens'>[], heldItems: number): string {
  const tokens = evicted.reduce((sum, i) => sum + i.tokens, 0);
  return `${doing} would evict ${grouped(evicted.length)} of the window's ${plural(heldItems, 'item')} (${plural(tokens, 'token')}), more than half of it.`;
}

/** "lib/ (3 files, 2,000 tokens)"; "2 files (2,000 tokens)", never "2 files (2 files, …)". */
export function setWords(what: string, files: number, tokens: number): string {
  const count = plural(files, 'file');
  return what === count ? `${what} (${plural(tokens, 'token')})` : `${what} (${count}, ${plural(tokens, 'token')})`;
}

/** The question before a bulk add the server would not make without `force`. */
export function addQuestion(plan: AddFilesResult, what: string): Question {
  const parts = ['These go to the archive (Restore from Archive brings them back):', ...labelList(plan.evicted)];
  for (const growth of plan.pinnedGrowth) {
    parts.push(`Pinned ${growth.label} becomes the whole file: ${grouped(growth.tokensBefore)} → ${plural(growth.tokensAfter, 'token')}.`);
  }
  return {
    message: mostOfTheWindow(`Adding ${setWords(what, plan.items.length, plan.tokens)}`, plan.evicted, plan.status.itemCount),
    detail: parts.join('\n'),
    confirm: `Add and Evict ${grouped(plan.evicted.length)}`,
  };
}

/** What a folder add left out, by name: "c.bin (binary), .env (may hold secrets; name it to add it)". */
export function leftOut(skipped: readonly SkippedFile[], shown = 5): string | undefined {
  if (skipped.length === 0) return undefined;
  const named = skipped.slice(0, shown).map((s) => `${s.path} (${s.reason})`);
  const more = skipped.length > shown ? `, and ${skipped.length - shown} more` : '';
  return `${named.join(', ')}${more}`;
}

/**
 * What the server's refusal says the set left out ("email/message.py, over the token budget on its
 * own; …"): its figures (NoRoomData) do not carry it.
 */
export function leftOutOf(message: string): string | undefined {
  const at = message.indexOf('Left out besides: ');
  return at < 0 ? undefined : message.slice(at + 'Left out besides: '.length).replace(/\.$/, '');
}

/** Why a set cannot fit beside the pinned items, with the server's figures and what it left out. */
export function noRoomMessage(data: NoRoomData, what: string, left?: string): string {
  const short: string[] = [];
  if (data.shortTokens > 0) short.push(`${plural(data.shortTokens, 'token')} too many`);
  if (data.shortItems > 0) short.push(`${plural(data.shortItems, 'item')} too many`);
  return (
    `${what} does not fit: it needs ${plural(data.tokens, 'token')} in ${plural(data.items, 'file')}, and beside ` +
    `the pinned items the window has room for ${plural(data.availableTokens, 'token')} and ` +
    `${plural(data.availableItems, 'item')} (${short.join(', ') || 'no room'}). Nothing was added: choose fewer ` +
    `files, unpin items, or raise contextls.maxTokens.` +
    (left ? ` Left out besides: ${left}.` : '')
  );
}

/** The figures of a NO_ROOM error, when it carries them (a bulk add's does). */
export function noRoomData(e: FailedRequest): NoRoomData | undefined {
  const d = e.data as Partial<NoRoomData> | undefined;
  return d && typeof d.tokens === 'number' && typeof d.availableTokens === 'number' ? (d as NoRoomData) : undefined;
}

/** The planned result a NEEDS_FORCE error carries. */
function plannedResult(e: FailedRequest): AddFilesResult | undefined {
  const d = e.data as Partial<AddFilesResult> | undefined;
  return d && Array.isArray(d.items) && Array.isArray(d.evicted) && d.status ? (d as AddFilesResult) : undefined;
}

/** A mistake or a refusal the person can act on, shown as it is. */
export class Refusal extends Error {}

export type SendAddFiles = (params: AddFilesParams) => Promise<AddFilesResult>;
/** Asks the person; `plan` is what the server planned (its `evicted` goes on yes). */
export type Ask<Plan = AddFilesResult> = (question: Question, plan: Plan) => Promise<boolean>;

/**
 * Adds a set as a whole. It slides the window like any add, unless the server answers that it
 * would evict more than half of it (NEEDS_FORCE): then the person is asked with the server's plan,
 * and the set is sent with `force` only on consent. A set that cannot fit is refused with the
 * figures; nothing changes then, nor when the person says no (undefined).
 */
export async function addAsAWhole(send: SendAddFiles, ask: Ask, params: AddFilesParams, what: string): Promise<AddFilesResult | undefined> {
  const attempt = async (force: boolean): Promise<AddFilesResult | { needsForce: AddFilesResult }> => {
    try {
      return await send({ ...params, force });
    } catch (e) {
      if (!isFailedRequest(e)) throw e;
      if (e.codeName === 'NO_ROOM') {
        const data = noRoomData(e);
        throw new Refusal(data ? noRoomMessage(data, what, leftOutOf(e.message)) : `${what}: ${e.message}`);
      }
      const planned = e.codeName === 'NEEDS_FORCE' ? plannedResult(e) : undefined;
      if (planned) return { needsForce: planned };
      throw e;
    }
  };
  const first = await attempt(false);
  if (!('needsForce' in first)) return first;
  if (!(await ask(addQuestion(first.needsForce, what), first.needsForce))) return undefined;
  const forced = await attempt(true);
  if ('needsForce' in forced) throw new Refusal(`${what} was not added: the server asked again although the add was forced.`);
  return forced;
}

/** How a finished bulk add reads: added, merged, evicted, skipped (named), refused. */
export interface AddReport {
  readonly summary: string;
  readonly problems: string | undefined;
  /** The person should see it in a notification (something was refused, or nothing at all was added). */
  readonly warn: boolean;
}

/**
 * What a finished bulk add says: added, evicted, skipped (by name when few), refused (by name).
 * A set that only brought files already in the window up to date says "merged".
 */
export function addReport(result: AddFilesResult, what: string): AddReport {
  const left = leftOut(result.skipped);
  const skipped = left ? `left out ${left}` : undefined;
  const problems = [...result.refused.map((r) => `${r.target}: ${r.message}`), ...result.warnings];
  if (result.items.length === 0) {
    const why = [skipped, result.refused.length > 0 ? `refused ${result.refused.map((r) => r.target).join(', ')}` : undefined].filter(Boolean);
    return {
      summary: `contextls: nothing added from ${what}${why.length > 0 ? `: ${why.join('; ')}` : ': it holds no file to add'}`,
      problems: problems.length > 0 ? problems.join('\n') : undefined,
      warn: true,
    };
  }
  const merged = Object.keys(result.merged);
  const parts = [`added ${setWords(what, result.items.length, result.tokens)}`];
  if (merged.length > 0) parts.push(`merged ${merged.join(', ')} into them`);
  for (const growth of result.pinnedGrowth) parts.push(`pinned ${growth.label} is the whole file now (${plural(growth.tokensAfter, 'token')})`);
  if (result.evicted.length > 0) parts.push(`evicted ${plural(result.evicted.length, 'item')}`);
  if (skipped) parts.push(skipped);
  return {
    summary: `contextls: ${parts.join('; ')}`,
    problems: problems.length > 0 ? problems.join('\n') : undefined,
    warn: problems.length > 0,
  };
}

/** What a restore says: what came back, what was there already, what made room. */
export function restoreReport(result: RestoreResult): string {
  const said = [
    ...result.items.map((i) => `restored ${i.label}`),
    ...result.alreadyInWindow.map((id) => `${id} is already in the window`),
    ...(result.evicted.length > 0 ? [`evicted ${result.evicted.map((i) => i.label).join(', ')} to make room`] : []),
  ];
  return `contextls: ${said.join('; ') || 'nothing to restore'}`;
}

/**
 * "added a.py:1-9", "added a.py:1-20; merged ctx-2 into it" (the CLI's words), "a.py was in the
 * window already: read again" (the same file or lines added again).
 */
export function addedWords(results: readonly Pick<AddResult, 'item' | 'merged' | 'deduplicated'>[]): string {
  return results
    .map(({ item, merged, deduplicated }) => {
      if (merged.length > 0) return `added ${item.label}; merged ${merged.join(', ')} into it`;
      return deduplicated ? `${item.label} was in the window already: read again` : `added ${item.label}`;
    })
    .join('; ');
}
