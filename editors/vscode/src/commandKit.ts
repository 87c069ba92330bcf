// What every command needs: the current folder, showing errors and questions, reporting what
// changed, and reading the items a command was given (a clicked row, an id, the view's selection).
import * as vscode from 'vscode';
import { NotRunning, ServerError } from './client';
import type { ContextItem } from './generated/protocol';
import type { Node } from './itemsView';
import { currentFolder } from './model';
import { Refusal, type Question } from './planned';

/** A mistake the user can fix; shown like the server's errors. */
export class UserError extends Error {}

export function folderOrThrow(): vscode.WorkspaceFolder {
  const folder = currentFolder();
  if (!folder) throw new UserError('contextls needs an open folder: open a folder or workspace first.');
  return folder;
}

export function workspaceUri(): string {
  return folderOrThrow().uri.toString();
}

export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** One error notification with the server's message; a budget problem offers the setting. */
export async function showError(e: unknown): Promise<void> {
  if (e instanceof NotRunning) return; // why it did not start is on screen already
  const message = `contextls: ${messageOf(e)}`;
  const budget = e instanceof Refusal || (e instanceof ServerError && (e.codeName === 'ITEM_TOO_LARGE' || e.codeName === 'NO_ROOM'));
  if (budget) {
    const open = 'Open Settings';
    if ((await vscode.window.showErrorMessage(message, open)) === open) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'contextls.maxTokens');
    }
    return;
  }
  await vscode.window.showErrorMessage(message);
}

/**
 * A modal question that goes ahead only on `question.confirm`. `keep` is the one button that
 * changes nothing: it is the dialog's own cancel (Escape and the close box mean it too), so no
 * second "Cancel" stands beside it saying the same.
 */
export async function askModal(question: Question, keep: string): Promise<boolean> {
  return (await chooseModal(question.message, question.detail, [question.confirm], keep)) === question.confirm;
}

/** A modal choice among `choices`; undefined when the person keeps things as they are (`keep`). */
export async function chooseModal(message: string, detail: string | undefined, choices: readonly string[], keep: string): Promise<string | undefined> {
  const items: vscode.MessageItem[] = [...choices.map((title) => ({ title })), { title: keep, isCloseAffordance: true }];
  const options: vscode.MessageOptions = { modal: true, ...(detail ? { detail } : {}) };
  const answer = await vscode.window.showWarningMessage(message, options, ...items);
  return answer === undefined || answer.isCloseAffordance ? undefined : answer.title;
}

/** A short note in the status bar. */
export function note(text: string): void {
  vscode.window.setStatusBarMessage(text, 5000);
}

/** The protocol's id lists have at least one id (the schema's minItems). */
export function nonEmpty(ids: readonly string[]): [string, ...string[]] {
  const [first, ...rest] = ids;
  if (first === undefined) throw new UserError('No item chosen.');
  return [first, ...rest];
}

export function itemOf(node: unknown): ContextItem | undefined {
  if (node && typeof node === 'object' && 'item' in node) return (node as Extract<Node, { item: ContextItem }>).item;
  return undefined;
}

/** The items a row command acts on: the clicked rows (several when selected together), else one. */
export function clickedItems(node: unknown, nodes: unknown): ContextItem[] {
  const many = Array.isArray(nodes) ? nodes.map(itemOf).filter((i): i is ContextItem => i !== undefined) : [];
  if (many.length > 0) return many;
  const one = itemOf(node);
  return one ? [one] : [];
}

/**
 * Evictions the person agreed to in a question a moment ago: their notification would only
 * repeat what they just read. Forgotten after a while, so a later eviction is announced.
 */
const consented = new Map<string, number>();
const CONSENT_MS = 30_000;

export function consentTo(ids: readonly string[]): void {
  const now = Date.now();
  for (const id of ids) consented.set(id, now);
}

/** The items of an eviction the person was not asked about. */
export function unasked<T extends { id: string }>(items: readonly T[]): T[] {
  const now = Date.now();
  return items.filter((i) => {
    const at = consented.get(i.id);
    return at === undefined || now - at > CONSENT_MS;
  });
}
