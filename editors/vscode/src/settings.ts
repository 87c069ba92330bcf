// Which VS Code settings go to the server, and how: the ones set seed a new window
// (initializationOptions); a change or a reset goes to each folder's window (contextls/configure).
import type { ConfigureParams, SearchParams, ServerSettings, WindowSettingsChange } from './generated/protocol';

/** How the archive is searched (the protocol's SearchMode). */
export type SearchMode = NonNullable<SearchParams['mode']>;

/**
 * The window settings the extension contributes as `contextls.<key>`. They belong to the window
 * (stored with it, shared with the command line and other editors): a change in VS Code, or a
 * reset, is sent to the window of each folder it applies to.
 */
export const WINDOW_KEYS = [
  'maxItems',
  'maxTokens',
  'model',
  'encoding',
  'evictionPolicy',
  'maxFileBytes',
  'budgetPolicy',
  'task',
  'budgetCeiling',
  'compaction',
  'mapTokens',
  'renderOrder',
] as const satisfies readonly NonNullable<ConfigureParams['reset']>[number][];
export type WindowKey = (typeof WINDOW_KEYS)[number];

/** The server's settings keys the extension contributes: the window's, and the database. */
export const SERVER_KEYS = [...WINDOW_KEYS, 'storage'] as const;
export type ServerKey = (typeof SERVER_KEYS)[number];

/** Every key is one the server knows: a key renamed in the protocol fails the typecheck. */
type Checked = Pick<ServerSettings, ServerKey>;

/**
 * The flat settings object for the server's `initializationOptions`: only what the user set (a
 * default from package.json would otherwise overwrite what a window keeps); they seed a new
 * window. An empty `storage` means the server's default.
 */
export function serverSettings(get: (key: ServerKey) => unknown): Checked {
  const settings: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const value = get(key);
    if (key === 'storage') settings[key] = typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
    else if (value !== undefined) settings[key] = value;
  }
  return settings;
}

/**
 * The `contextls/configure` params for changed window settings: a key the user set is sent with
 * its value; a key no longer set (Reset Setting) goes back to the server's default, which is what
 * the Settings UI then shows.
 */
export function windowChange(
  changed: readonly WindowKey[],
  get: (key: WindowKey) => unknown,
): { settings: WindowSettingsChange; reset: WindowKey[] } {
  const settings: WindowSettingsChange = {};
  const reset: WindowKey[] = [];
  for (const key of changed) {
    const value = get(key);
    if (value === undefined) reset.push(key);
    else (settings as Record<string, unknown>)[key] = value;
  }
  return { settings, reset };
}

/** What the user set for a key (folder, workspace or user settings), never the default. */
export function explicitValue(
  inspected: { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown } | undefined,
): unknown {
  return inspected?.workspaceFolderValue ?? inspected?.workspaceValue ?? inspected?.globalValue;
}

/** The server command line: `contextls.server.command`, else connect/serve as `shared` says. */
export function serverCommand(config: { get(key: string): unknown }): string {
  const set = config.get('contextls.server.command');
  if (typeof set === 'string' && set.trim() !== '') return set.trim();
  return config.get('contextls.server.shared') === false ? 'contextls serve' : 'contextls connect';
}

const SEARCH_MODES: readonly SearchMode[] = ['hybrid', 'semantic', 'keyword'];

/** `contextls.search.mode` as the search request's `mode`: undefined lets the server choose. */
export function searchMode(config: { get(key: string): unknown }): SearchMode | undefined {
  const set = config.get('contextls.search.mode');
  return SEARCH_MODES.find((mode) => mode === set);
}

/** How a hit was found, in words a person reads: "meaning+words". */
export function foundBy(modes: readonly SearchMode[]): string {
  return modes.map((mode) => (mode === 'semantic' ? 'meaning' : mode === 'keyword' ? 'words' : mode)).join('+');
}

/** The search box's placeholder, for the mode the search will run in. */
export function searchPlaceholder(mode: SearchMode | undefined, semanticAvailable: boolean): string {
  const effective = mode ?? (semanticAvailable ? 'hybrid' : 'keyword');
  if (effective === 'keyword') return 'Words that occur in the evicted item (e.g. parse_config)';
  if (effective === 'semantic') return 'Describe what you look for, in your own words (e.g. where the token budget is checked)';
  return 'Words it holds, or a description of what you look for';
}
