// Which VS Code settings go to the server, and how (initializationOptions and
// workspace/didChangeConfiguration carry the same flat object).
import type { SearchParams, ServerSettings } from './generated/protocol';

/** How the archive is searched (the protocol's SearchMode). */
export type SearchMode = NonNullable<SearchParams['mode']>;

/** The server's settings keys the extension contributes as `contextls.<key>`. */
export const SERVER_KEYS = ['maxItems', 'maxTokens', 'encoding', 'evictionPolicy', 'maxFileBytes', 'storage'] as const;
export type ServerKey = (typeof SERVER_KEYS)[number];

/** Every key is one the server knows: a key renamed in the protocol fails the typecheck. */
type Checked = Pick<ServerSettings, ServerKey>;

/**
 * The flat settings object for the server: only what the user set (a default from package.json
 * would otherwise seed, or overwrite, the window's own settings, which live with the window);
 * an empty `storage` means the server's default.
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
