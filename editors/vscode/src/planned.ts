// Changes the server plans as a whole (a bulk add of folders and files, a restore): what
// would go is asked about first, a set that cannot fit is refused with the server's figures.
// No `vscode` import: the flow takes its requests and its question as functions, so the unit
// tests drive it against the contract.
import type { AddFilesParams, AddFilesResult, ContextItem, NoRoomData, RestoreResult } from './generated/protocol';
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
function labelList(items: readonly Pick<ContextItem, 'label' | 'tokens' | 'pinned'>[], shown = 8): string[] {
  const lines = items.slice(0, shown).map((i) => `• ${i.label} (${grouped(i.tokens)} tokens)`);
  if (items.length > shown) lines.push(`• and ${items.length - shown} more`);
  return lines;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${grouped(n)} ${n === 1 ? one : many}`;

/**
 * The question before a bulk add that would evict what the window holds, or a pinned item that
 * would grow; undefined when nothing the person had would change.
 */
export function addQuestion(plan: AddFilesResult, what: string): Question | undefined {
  if (plan.evicted.length === 0 && plan.pinnedGrowth.length === 0) return undefined;
  const adding = `${plural(plan.items.length, 'file')}, ${plural(plan.tokens, 'token')}`;
  const parts: string[] = [];
  if (plan.evicted.length > 0) {
    parts.push(`These go to the archive (Search Archive and Restore bring them back):`, ...labelList(plan.evicted));
  }
  for (const growth of plan.pinnedGrowth) {
    parts.push(
      `Pinned ${growth.label} becomes the whole file: ${grouped(growth.tokensBefore)} → ${grouped(growth.tokensAfter)} tokens.`,
    );
  }
  const evicts = plan.evicted.length > 0 ? `evicts ${plural(plan.evicted.length, 'item')} of the window` : 'grows pinned items';
  return {
    message: `Adding ${what} (${adding}) ${evicts}.`,
    detail: parts.join('\n'),
    confirm: plan.evicted.length > 0 ? `Add and Evict ${plan.evicted.length}` : 'Add',
  };
}

/** Why a set cannot fit beside the pinned items, with the server's figures. */
export function noRoomMessage(data: NoRoomData, what: string): string {
  const short: string[] = [];
  if (data.shortTokens > 0) short.push(`${plural(data.shortTokens, 'token')} too many`);
  if (data.shortItems > 0) short.push(`${plural(data.shortItems, 'item')} too many`);
  return (
    `${what} does not fit: it needs ${plural(data.tokens, 'token')} in ${plural(data.items, 'file')}, and beside ` +
    `the pinned items the window has room for ${plural(data.availableTokens, 'token')} and ` +
    `${plural(data.availableItems, 'item')} (${short.join(', ') || 'no room'}). Nothing was added: choose fewer ` +
    `files, unpin items, or raise contextls.maxTokens.`
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
  return d && Array.isArray(d.items) && Array.isArray(d.evicted) ? (d as AddFilesResult) : undefined;
}

/** A mistake or a refusal the person can act on, shown as it is. */
export class Refusal extends Error {}

export type SendAddFiles = (params: AddFilesParams) => Promise<AddFilesResult>;
/** Asks the person; `plan` is what the server planned (its `evicted` goes on yes). */
export type Ask<Plan = AddFilesResult> = (question: Question, plan: Plan) => Promise<boolean>;

/**
 * Adds a set as a whole: a dry run first; if it would evict anything (or grow a pinned item),
 * asks, and sends it with `force` only on consent. A set that cannot fit is refused with the
 * figures; nothing changes then, nor when the person says no (undefined).
 */
export async function addAsAWhole(send: SendAddFiles, ask: Ask, params: AddFilesParams, what: string): Promise<AddFilesResult | undefined> {
  const attempt = async (extra: Partial<AddFilesParams>): Promise<AddFilesResult | { needsForce: AddFilesResult }> => {
    try {
      return await send({ ...params, ...extra });
    } catch (e) {
      if (!isFailedRequest(e)) throw e;
      if (e.codeName === 'NO_ROOM') {
        const data = noRoomData(e);
        throw new Refusal(data ? noRoomMessage(data, what) : e.message);
      }
      const planned = e.codeName === 'NEEDS_FORCE' ? plannedResult(e) : undefined;
      if (planned) return { needsForce: planned };
      throw e;
    }
  };
  const dry = await attempt({ dryRun: true, force: false });
  let plan = 'needsForce' in dry ? dry.needsForce : dry;
  // Two rounds: the window may change between the question and the add (another client).
  for (let round = 0; round < 2; round++) {
    const question = addQuestion(plan, what);
    if (question && !(await ask(question, plan))) return undefined;
    const done = await attempt({ dryRun: false, force: question !== undefined });
    if (!('needsForce' in done)) return done;
    plan = done.needsForce;
  }
  throw new Refusal(`The window kept changing while ${what} was being added; nothing was added. Try again.`);
}

/**
 * What a finished bulk add says: added, evicted, skipped (by reason), refused. `warn`: the person
 * should see it in a notification (something was refused, or nothing at all was added).
 */
export function addReport(result: AddFilesResult, what: string): { summary: string; problems: string | undefined; warn: boolean } {
  const reasons = new Map<string, number>();
  for (const s of result.skipped) reasons.set(s.reason, (reasons.get(s.reason) ?? 0) + 1);
  const skipped = reasons.size > 0 ? `skipped ${[...reasons].map(([reason, n]) => `${n} ${reason}`).join(', ')}` : undefined;
  const problems = [...result.refused.map((r) => `${r.target}: ${r.message}`), ...result.warnings];
  if (result.items.length === 0) {
    const why = [skipped, problems.length > 0 ? `refused ${plural(result.refused.length, 'target')}` : undefined].filter(Boolean);
    return {
      summary: `contextls: nothing added from ${what}${why.length > 0 ? `: ${why.join('; ')}` : ': it holds no file to add'}`,
      problems: problems.length > 0 ? problems.join('\n') : undefined,
      warn: true,
    };
  }
  const parts = [`added ${what}: ${plural(result.items.length, 'file')}, ${plural(result.tokens, 'token')}`];
  if (result.evicted.length > 0) parts.push(`evicted ${plural(result.evicted.length, 'item')}`);
  if (skipped) parts.push(skipped);
  return {
    summary: `contextls: ${parts.join('; ')}`,
    problems: problems.length > 0 ? problems.join('\n') : undefined,
    warn: problems.length > 0,
  };
}

/** The question before a restore that would evict other items; undefined when none would go. */
export function restoreQuestion(plan: RestoreResult): Question | undefined {
  if (plan.evicted.length === 0) return undefined;
  const restoring = plan.items.map((i) => i.label).join(', ') || 'the item';
  return {
    message: `Restoring ${restoring} evicts ${plural(plan.evicted.length, 'item')} of the window.`,
    detail: ['These go to the archive:', ...labelList(plan.evicted)].join('\n'),
    confirm: `Restore and Evict ${plan.evicted.length}`,
  };
}

export type SendRestore = (params: { ids: [string, ...string[]]; dryRun: boolean }) => Promise<RestoreResult>;

/**
 * Restores archived items, asking first when that would evict others (a dry run says). An
 * older server that does not know `dryRun` restores at once: its answer says so, and is the result.
 */
export async function restoreAsked(send: SendRestore, ask: Ask<RestoreResult>, ids: [string, ...string[]]): Promise<RestoreResult | undefined> {
  const plan = await send({ ids, dryRun: true });
  if (!plan.dryRun) return plan;
  const question = restoreQuestion(plan);
  if (question && !(await ask(question, plan))) return undefined;
  return send({ ids, dryRun: false });
}
