// The window inside VS Code's chat: two language-model tools (the window, the archive search)
// that run over the extension's own connection, the `@contextls` participant, and, where VS Code
// has the API (1.101+), an MCP server definition per folder for agent mode.
import * as os from 'node:os';
import * as vscode from 'vscode';
import { locate, type ContextClient } from '../client';
import { expandHome, splitCommand } from '../format';
import type { ContextItem } from '../generated/protocol';
import * as ext from '../lsp_ext';
import { currentFolder } from '../model';
import { searchMode, serverCommand } from '../settings';
import { contextlsPrefix, mcpServers } from './mcpServers';
import { contextParticipant } from './participant';
import { contextRenderParams, partsAtBreakpoints, searchToolText, type ContextToolInput, type SearchToolInput } from './toolText';

export const CONTEXT_TOOL = 'contextls_context';
export const SEARCH_TOOL = 'contextls_search_archive';

/** The folder a tool call names (by name or path), else the current one. */
function folderFor(name: string | undefined): vscode.WorkspaceFolder {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const named = name ? folders.find((f) => f.name === name || f.uri.fsPath === name) : undefined;
  const folder = named ?? currentFolder();
  if (!folder) throw new Error('No workspace folder is open, so there is no contextls window.');
  return folder;
}

function text(value: string): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(value)]);
}

/**
 * Registers each part where this VS Code has it; a part that fails says so in the output and
 * leaves the rest of the extension working.
 */
export function registerChat(client: ContextClient, context: vscode.ExtensionContext, output: vscode.LogOutputChannel): void {
  const parts: [string, (c: ContextClient, x: vscode.ExtensionContext) => void][] = [
    ['the language-model tools', registerTools],
    ['the @contextls chat participant', registerParticipant],
    ['the MCP server definitions', registerMcpServers],
  ];
  for (const [what, register] of parts) {
    try {
      register(client, context);
    } catch (e) {
      output.warn(`${what} are not available in this VS Code (${vscode.version}): ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}

function registerTools(client: ContextClient, context: vscode.ExtensionContext): void {
  const contextTool: vscode.LanguageModelTool<ContextToolInput> = {
    prepareInvocation: (options) => ({
      invocationMessage: options.input.query ? `Reading the contextls window (and the archive on “${options.input.query}”)` : 'Reading the contextls window',
    }),
    invoke: async (options) => {
      const folder = folderFor(options.input.folder);
      const rendered = await client.request(ext.render, contextRenderParams(options.input, folder.uri.toString()));
      if (rendered.itemIds.length === 0 && rendered.historyIds.length === 0) return text(`The contextls window of ${folder.name} is empty.`);
      const parts = partsAtBreakpoints(rendered.text, rendered.breakpoints);
      return new vscode.LanguageModelToolResult(parts.map((part) => new vscode.LanguageModelTextPart(part)));
    },
  };
  const searchTool: vscode.LanguageModelTool<SearchToolInput> = {
    prepareInvocation: (options) => ({ invocationMessage: `Searching the contextls archive for “${options.input.query}”` }),
    invoke: async (options) => {
      const folder = folderFor(options.input.folder);
      const limit = Math.min(Math.max(Math.floor(options.input.limit ?? 5), 1), 20);
      const result = await client.request(ext.search, {
        workspace: folder.uri.toString(),
        query: options.input.query,
        limit,
        mode: searchMode(vscode.workspace.getConfiguration()),
      });
      return text(searchToolText(options.input.query, result));
    },
  };
  context.subscriptions.push(vscode.lm.registerTool(CONTEXT_TOOL, contextTool), vscode.lm.registerTool(SEARCH_TOOL, searchTool));
}

function registerParticipant(client: ContextClient, context: vscode.ExtensionContext): void {
  const handler = contextParticipant<vscode.Uri | vscode.Location>({
    window: async () => {
      const workspace = folderFor(undefined).uri.toString();
      const [rendered, listed] = await Promise.all([
        client.request(ext.render, { workspace, format: 'markdown' }),
        client.request(ext.list, { workspace }),
      ]);
      return { text: rendered.text, items: listed.items };
    },
    search: (query) =>
      client.request(ext.search, { workspace: folderFor(undefined).uri.toString(), query, limit: 10, mode: searchMode(vscode.workspace.getConfiguration()) }),
    reference: referenceOf,
    userMessage: (value) => vscode.LanguageModelChatMessage.User(value),
  });
  const participant = vscode.chat.createChatParticipant('contextls.chat', (request, chatContext, stream, token) =>
    handler(request, chatContext, stream, token),
  );
  participant.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'icon.png');
  context.subscriptions.push(participant);
}

/** Where an item comes from, for the chat's references. */
function referenceOf(item: ContextItem): vscode.Uri | vscode.Location | undefined {
  const uri = typeof item.metadata.uri === 'string' ? vscode.Uri.parse(item.metadata.uri) : undefined;
  if (uri?.scheme !== 'file') return undefined;
  const start = item.metadata.startLine;
  const end = item.metadata.endLine;
  if (item.kind !== 'file' && typeof start === 'number' && typeof end === 'number') {
    return new vscode.Location(uri, new vscode.Range(start - 1, 0, end - 1, Number.MAX_SAFE_INTEGER));
  }
  return uri;
}

/**
 * What VS Code added for MCP servers (stable in 1.101), which the 1.95 typings this builds against
 * lack. 1.100 has it as a proposal (contribution point `modelContextServerCollections`, also
 * declared) that stock VS Code opens to no marketplace extension; code-server 4.100 opens it.
 */
interface McpApi {
  registerMcpServerDefinitionProvider(id: string, provider: {
    onDidChangeMcpServerDefinitions?: vscode.Event<void>;
    provideMcpServerDefinitions(): unknown[];
  }): vscode.Disposable;
}
type McpStdioServerDefinitionClass = new (label: string, command: string, args?: string[], env?: Record<string, string>) => { cwd?: vscode.Uri };

/** `contextls mcp --workspace <folder>` for each folder, if this VS Code lists MCP servers from extensions. */
function registerMcpServers(client: ContextClient, context: vscode.ExtensionContext): void {
  const lm = vscode.lm as unknown as Partial<McpApi>;
  const Definition = (vscode as unknown as { McpStdioServerDefinition?: McpStdioServerDefinitionClass }).McpStdioServerDefinition;
  if (typeof lm.registerMcpServerDefinitionProvider !== 'function' || typeof Definition !== 'function') return;
  const changed = new vscode.EventEmitter<void>();
  context.subscriptions.push(
    changed,
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      changed.fire();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('contextls.server') || e.affectsConfiguration('contextls.storage')) changed.fire();
    }),
    // found on a start (Restart Server after an install, say): the definitions run that program
    client.onLocated(() => {
      changed.fire();
    }),
    lm.registerMcpServerDefinitionProvider('contextls.mcp', {
      onDidChangeMcpServerDefinitions: changed.event,
      provideMcpServerDefinitions: () => {
        const config = vscode.workspace.getConfiguration();
        const prefix = contextlsPrefix(splitCommand(serverCommand(config)));
        const [program] = prefix;
        if (program === undefined) return [];
        const storage = config.get<string>('contextls.storage')?.trim();
        const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => ({ name: f.name, fsPath: f.uri.fsPath }));
        // found as the server is (PATH, or ~/.local/bin and the like), else as the setting says
        const wanted = expandHome(program, os.homedir());
        const found = locate(wanted)?.path ?? client.located?.program ?? wanted;
        return mcpServers(folders, prefix, found, storage ? expandHome(storage, os.homedir()) : undefined).map((server) => {
          const definition = new Definition(server.label, server.command, server.args);
          definition.cwd = vscode.Uri.file(server.cwd);
          return definition;
        });
      },
    }),
  );
}
