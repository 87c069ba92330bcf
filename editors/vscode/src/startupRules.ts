// What the startup check reads: whether a status shows a window, and how to ask the shared daemon
// whether it runs. Pure: the unit tests run it under node.
import { contextlsPrefix } from './chat/mcpServers';
import type { Status } from './generated/protocol';

/** A window is there: something was added to it once (its revision moved), or it has an archive. */
export function hasWindow(status: Pick<Status, 'revision' | 'itemCount' | 'archivedCount'>): boolean {
  return status.revision > 0 || status.itemCount > 0 || status.archivedCount > 0;
}

/** The command line that asks the daemon whether it runs, from the server's command; undefined
 * when the server is not the shared daemon (a `serve` of its own has nothing to ask). */
export function daemonStatusCommand(words: readonly string[], storage: string | undefined): string[] | undefined {
  if (words[words.length - 1] !== 'connect') return undefined;
  const prefix = contextlsPrefix(words);
  if (prefix.length === 0) return undefined;
  return [...prefix, '--json', ...(storage ? ['--storage', storage] : []), 'daemon', 'status'];
}

/**
 * `contextls --json daemon status` says the daemon runs: it describes a daemon that answered (its
 * pid), or says `"running": false` with where it would listen.
 */
export function daemonRuns(output: string): boolean {
  try {
    const said = JSON.parse(output) as { running?: unknown; pid?: unknown };
    return said.running === true || (said.running === undefined && typeof said.pid === 'number');
  } catch {
    return false;
  }
}
