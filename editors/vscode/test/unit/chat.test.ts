// The window in VS Code's chat: the MCP servers offered to agent mode, the tools' text, and the
// @contextls participant's handler.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contextlsPrefix, mcpServers } from '../../src/chat/mcpServers';
import { contextParticipant, type ParticipantStream } from '../../src/chat/participant';
import { contextRenderParams, fenceFor, partsAtBreakpoints, searchToolText } from '../../src/chat/toolText';
import type { ContextItem, SearchResult } from '../../src/generated/protocol';
import { item } from './fixtures';

describe('mcpServers', () => {
  it('runs `contextls mcp --workspace <folder>` for each folder, with the program found', () => {
    const servers = mcpServers([{ name: 'app', fsPath: '/w/app' }], contextlsPrefix(['contextls', 'connect']), '/home/ada/.local/bin/contextls', undefined);
    assert.deepEqual(servers, [{ label: 'contextls', command: '/home/ada/.local/bin/contextls', args: ['mcp', '--workspace', '/w/app'], cwd: '/w/app' }]);
  });
  it('names each folder when there are several, and passes the database on', () => {
    const servers = mcpServers(
      [{ name: 'api', fsPath: '/w/api' }, { name: 'web', fsPath: '/w/web' }],
      contextlsPrefix(['/venv/bin/contextls', 'serve']),
      '/venv/bin/contextls',
      '/tmp/db.sqlite3',
    );
    assert.deepEqual(servers.map((s) => s.label), ['contextls · api', 'contextls · web']);
    assert.deepEqual(servers[1]?.args, ['mcp', '--workspace', '/w/web', '--storage', '/tmp/db.sqlite3']);
  });
  it('keeps what runs contextls before its command (python -m contextls)', () => {
    assert.deepEqual(contextlsPrefix(['python3', '-m', 'contextls', 'connect', '--storage', 'x']), ['python3', '-m', 'contextls']);
    const [server] = mcpServers([{ name: 'a', fsPath: '/a' }], ['python3', '-m', 'contextls'], '/usr/bin/python3', undefined);
    assert.deepEqual([server?.command, server?.args], ['/usr/bin/python3', ['-m', 'contextls', 'mcp', '--workspace', '/a']]);
  });
  it('offers nothing without folders', () => {
    assert.deepEqual(mcpServers([], ['contextls'], 'contextls', undefined), []);
  });
});

describe('contextRenderParams', () => {
  it('renders markdown within the tokens asked, with what the query finds', () => {
    assert.deepEqual(contextRenderParams({ maxTokens: 2000.7, query: ' budget ' }, 'file:///w'), {
      workspace: 'file:///w',
      format: 'markdown',
      maxTokens: 2000,
      query: 'budget',
    });
    assert.deepEqual(contextRenderParams({ maxTokens: 0, query: '  ' }, 'file:///w'), { workspace: 'file:///w', format: 'markdown' });
  });
});

function searchResult(hits: { item: ContextItem; reason: string }[]): SearchResult {
  return {
    hits: hits.map((h) => ({ item: h.item, score: 1, snippet: h.item.content.slice(0, 20), archivedAt: 0, reason: h.reason, modes: ['keyword'], highlights: [] })),
    mode: 'keyword',
    warning: null,
  };
}

describe('searchToolText', () => {
  it('gives each hit\'s id, why it left and its text in a fence longer than its backticks', () => {
    const text = searchToolText('budget', searchResult([{ item: item({ id: 'ctx-4', content: 'x = "```"\n', metadata: { language: 'python' } }), reason: 'maxTokens' }]));
    assert.match(text, /^1 archived item match "budget" \(keyword search\):/);
    assert.match(text, /### ctx-4: a\.py:3-4\nevicted at the token budget; 120 tokens; found by words\n\n````python\nx = "```"\n\n````/);
    assert.match(text, /Restore from Archive/);
  });
  it('says so when nothing matches', () => {
    assert.equal(searchToolText('nothing', searchResult([])), 'No archived item matches "nothing".');
  });
  it('makes fences of at least three backticks', () => {
    assert.equal(fenceFor('no ticks'), '```');
    assert.equal(fenceFor('````'), '`````');
  });
});

class Stream implements ParticipantStream<string> {
  readonly parts: string[] = [];
  readonly refs: string[] = [];
  markdown(text: string): void {
    this.parts.push(text);
  }
  reference(ref: string): void {
    this.refs.push(ref);
  }
  progress(): void {
    /* nothing to draw */
  }
}

const WINDOW = {
  text: '## Context\n\n### Code (from a.py:3-4)\n',
  items: [item({ id: 'ctx-1' }), item({ id: 'ctx-2', kind: 'text', label: 'note', metadata: {} })],
};

function handler(window = WINDOW) {
  return contextParticipant<string>({
    window: () => Promise.resolve(window),
    search: (query) => Promise.resolve(searchResult(query === 'budget' ? [{ item: item({ id: 'ctx-7', content: 'def budget(): pass' }), reason: 'removed' }] : [])),
    reference: (i) => (typeof i.metadata.uri === 'string' ? `${i.metadata.uri}#${String(i.metadata.startLine)}` : undefined),
    userMessage: (text) => ({ role: 'user', text }),
  });
}

describe('the @contextls participant', () => {
  it('asks the chat\'s model with the window first, and attaches the items as references', async () => {
    const sent: unknown[][] = [];
    const model = {
      sendRequest: (messages: unknown[]) => {
        sent.push(messages);
        return Promise.resolve({
          text: (async function* () {
            yield await Promise.resolve('The budget ');
            yield 'is checked in a.py.';
          })(),
        });
      },
    };
    const stream = new Stream();
    const result = await handler()({ prompt: 'where is the budget checked?', command: undefined, model }, {}, stream, undefined);
    assert.deepEqual(stream.refs, ['file:///w/a.py#3']); // the note has no file
    assert.equal(sent.length, 1);
    const [preamble, question] = sent[0] as { text: string }[];
    assert.match(preamble?.text ?? '', /contextls[\s\S]*## Context\n\n### Code \(from a\.py:3-4\)/);
    assert.equal(question?.text, 'where is the budget checked?');
    assert.equal(stream.parts.join(''), 'The budget is checked in a.py.');
    assert.deepEqual(result.metadata, { command: 'ask', items: 2 });
  });
  it('/show shows the window without asking a model', async () => {
    const stream = new Stream();
    const model = { sendRequest: () => Promise.reject(new Error('must not be asked')) };
    await handler()({ prompt: '', command: 'show', model }, {}, stream, undefined);
    assert.deepEqual(stream.parts, [WINDOW.text]);
    assert.equal(stream.refs.length, 1);
  });
  it('says when the window is empty', async () => {
    const stream = new Stream();
    await handler({ text: '## Context\n', items: [] })({ prompt: '', command: undefined }, {}, stream, undefined);
    assert.deepEqual(stream.parts, ['The context window of this folder is empty.']);
  });
  it('/search lists the archive\'s hits, and says what to type without a query', async () => {
    const stream = new Stream();
    const result = await handler()({ prompt: 'budget', command: 'search' }, {}, stream, undefined);
    assert.match(stream.parts[0] ?? '', /1 archived item match “budget”:\n\n- \*\*a\\\.py:3\\-4\*\* \(ctx-7, 120 tokens, removed by hand\): def budget\\\(\\\): pass/);
    assert.deepEqual(result.metadata, { command: 'search', items: 1 });
    const empty = new Stream();
    await handler()({ prompt: ' ', command: 'search' }, {}, empty, undefined);
    assert.match(empty.parts[0] ?? '', /@contextls \/search token budget/);
  });
});

describe('partsAtBreakpoints', () => {
  const mark = (after: 'pinned' | 'settled' | 'end', utf16Offset: number) => ({ after, offset: utf16Offset, utf16Offset, tokens: 0 });
  it('cuts the render where its stable parts end, and the parts join it again', () => {
    const render = '## Context\n\npinned 😀\n\nolder\n\nnewest\n';
    const pinnedEnd = render.indexOf('older');
    const settledEnd = render.indexOf('newest');
    const parts = partsAtBreakpoints(render, [mark('pinned', pinnedEnd), mark('settled', settledEnd), mark('end', render.length)]);
    assert.deepEqual(parts, [render.slice(0, pinnedEnd), render.slice(pinnedEnd, settledEnd), render.slice(settledEnd)]);
    assert.equal(parts.join(''), render);
  });
  it('is the whole render when it has no inner breakpoint', () => {
    assert.deepEqual(partsAtBreakpoints('one item\n', [mark('end', 9)]), ['one item\n']);
  });
});
