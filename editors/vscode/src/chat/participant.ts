// The `@contextls` chat participant's handler: it answers with the context window attached as
// references. `/show` shows the window, `/search` searches the archive, anything else goes to the
// chat's model with the window before the question. No `vscode` import: what it needs from
// VS Code (references, messages) comes in as functions, so the unit tests drive it.
import type { ContextItem, SearchResult } from '../generated/protocol';
import { flatSnippet } from '../snippets';
import { archiveReason, escapeMarkdown, grouped } from '../format';

export interface ParticipantStream<Ref> {
  markdown(text: string): void;
  reference(ref: Ref): void;
  progress(text: string): void;
}

export interface ParticipantModel {
  sendRequest(messages: unknown[], options: object, token: unknown): PromiseLike<{ text: AsyncIterable<string> }>;
}

export interface ParticipantRequest {
  readonly prompt: string;
  readonly command: string | undefined;
  readonly model?: ParticipantModel | undefined;
}

export interface ParticipantDeps<Ref> {
  /** The current folder's window, rendered as markdown, and its items. */
  window(): Promise<{ text: string; items: readonly ContextItem[] }>;
  search(query: string): Promise<SearchResult>;
  /** Where an item comes from, as a chat reference (a file, or lines of one); undefined for notes. */
  reference(item: ContextItem): Ref | undefined;
  /** A user message for the model. */
  userMessage(text: string): unknown;
}

export interface ParticipantResult {
  readonly metadata: { readonly command: string; readonly items: number };
}

const PREAMBLE =
  'The user keeps the context of their work in contextls: code regions, files, errors and notes ' +
  'they chose. Use it to answer the question that follows.';

export function contextParticipant<Ref>(deps: ParticipantDeps<Ref>) {
  return async (request: ParticipantRequest, _context: unknown, stream: ParticipantStream<Ref>, token: unknown): Promise<ParticipantResult> => {
    if (request.command === 'search') {
      const query = request.prompt.trim();
      if (!query) {
        stream.markdown('Say what to look for: `@contextls /search token budget`.');
        return { metadata: { command: 'search', items: 0 } };
      }
      const result = await deps.search(query);
      stream.markdown(searchMarkdown(query, result));
      return { metadata: { command: 'search', items: result.hits.length } };
    }
    stream.progress('Reading the context window');
    const window = await deps.window();
    for (const item of window.items) {
      const ref = deps.reference(item);
      if (ref !== undefined) stream.reference(ref);
    }
    const model = request.command !== 'show' && request.prompt.trim() !== '' ? request.model : undefined;
    if (!model) {
      stream.markdown(window.items.length > 0 ? window.text : 'The context window of this folder is empty.');
      return { metadata: { command: 'show', items: window.items.length } };
    }
    const context = window.items.length > 0 ? window.text : '(The context window is empty.)';
    const messages = [deps.userMessage(`${PREAMBLE}\n\n${context}`), deps.userMessage(request.prompt)];
    const response = await model.sendRequest(messages, {}, token);
    for await (const fragment of response.text) stream.markdown(fragment);
    return { metadata: { command: 'ask', items: window.items.length } };
  };
}

/** The archive search's hits for a person in the chat: label, why it left, the snippet. */
export function searchMarkdown(query: string, result: SearchResult): string {
  if (result.hits.length === 0) return `Nothing in the archive matches “${escapeMarkdown(query)}”.`;
  const lines = [`${result.hits.length} archived item${result.hits.length === 1 ? '' : 's'} match “${escapeMarkdown(query)}”:`, ''];
  for (const hit of result.hits) {
    const { text } = flatSnippet(hit.snippet, []);
    lines.push(
      `- **${escapeMarkdown(hit.item.label)}** (${hit.item.id}, ${grouped(hit.item.tokens)} tokens, ${archiveReason(hit.reason)}): ${escapeMarkdown(text)}`,
    );
  }
  lines.push('', 'Run “contextls: Restore from Archive” to bring one back.');
  return lines.join('\n');
}
