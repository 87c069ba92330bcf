// The MCP servers the extension offers VS Code's agent mode: `contextls mcp --workspace <folder>`
// for each workspace folder, run the way the extension runs its own server. Pure.

export interface McpServer {
  readonly label: string;
  readonly command: string;
  readonly args: string[];
  readonly cwd: string;
}

/**
 * The words that run contextls itself, from the server command line: everything before its
 * `connect` or `serve` (`/venv/bin/contextls`, or `python -m contextls`).
 */
export function contextlsPrefix(words: readonly string[]): string[] {
  const at = words.findIndex((w) => w === 'connect' || w === 'serve');
  return at >= 0 ? words.slice(0, at) : [...words];
}

/** One MCP server per folder; `program` is the located executable of the prefix's first word. */
export function mcpServers(
  folders: readonly { name: string; fsPath: string }[],
  prefix: readonly string[],
  program: string,
  storage: string | undefined,
): McpServer[] {
  const storageArgs = storage ? ['--storage', storage] : [];
  return folders.map((folder) => ({
    label: folders.length > 1 ? `contextls · ${folder.name}` : 'contextls',
    command: program,
    args: [...prefix.slice(1), 'mcp', '--workspace', folder.fsPath, ...storageArgs],
    cwd: folder.fsPath,
  }));
}
