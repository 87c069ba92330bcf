// The bulk add and the restore against the contract: an add slides the window, a question only
// when the server says the set would evict more than half of it (in the command line's words),
// force only on consent, and the server's figures (and what was left out) when it cannot fit.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AddFilesParams, AddFilesResult, NoRoomData, RestoreResult } from '../../src/generated/protocol';
import {
  addAsAWhole,
  addedWords,
  addQuestion,
  addReport,
  describeTargets,
  evictsMostOf,
  labelList,
  noRoomMessage,
  Refusal,
  restoreReport,
  type Question,
} from '../../src/planned';
import { item, status } from './fixtures';

function planned(overrides: Partial<AddFilesResult> = {}): AddFilesResult {
  return {
    items: [item({ id: 'ctx-5', kind: 'file', label: 'lib/a.py', tokens: 900 }), item({ id: 'ctx-6', kind: 'file', label: 'lib/b.py', tokens: 1100 })],
    evicted: [],
    tokens: 2000,
    status: status(),
    merged: {},
    pinnedGrowth: [],
    skipped: [],
    refused: [],
    warnings: [],
    secrets: [],
    dryRun: true,
    ...overrides,
  };
}

/** A server error as the client raises it: the name from the schema, and the data. */
class Failed extends Error {
  constructor(
    readonly codeName: string,
    readonly data: unknown,
  ) {
    super(`server said ${codeName}`);
  }
}

const params: AddFilesParams = { workspace: 'file:///w', targets: [{ uri: 'file:///w/lib' }] };

/** A fake server that answers in turn, and records what it was sent. */
function server(...answers: (AddFilesResult | Failed)[]) {
  const sent: AddFilesParams[] = [];
  const send = (p: AddFilesParams): Promise<AddFilesResult> => {
    sent.push(p);
    const answer = answers.shift();
    if (!answer) return Promise.reject(new Error('no more answers'));
    return answer instanceof Failed ? Promise.reject(answer) : Promise.resolve(answer);
  };
  return { sent, send };
}

function asker(answer: boolean) {
  const asked: Question[] = [];
  return { asked, ask: (q: Question) => (asked.push(q), Promise.resolve(answer)) };
}

const gone = [item({ id: 'ctx-1', label: 'textwrap.py:373-384', tokens: 300 }), item({ id: 'ctx-2', label: 'notes', tokens: 200 })];

const held = (items: number, tokens: number) => status({ itemCount: items, tokens });

describe('addAsAWhole', () => {
  it('slides the window like any add: no question, no dry run, what it evicted in the answer', async () => {
    const { sent, send } = server(planned({ evicted: gone, dryRun: false }));
    const { asked, ask } = asker(false);
    const result = await addAsAWhole(send, ask, params, 'lib/');
    assert.equal(asked.length, 0);
    assert.deepEqual(sent.map((p) => [p.dryRun, p.force]), [[undefined, false]]);
    assert.equal(result?.evicted.length, 2);
  });

  it('asks only when the server says it would evict more than half (NEEDS_FORCE), in the command line\'s words', async () => {
    const plan = planned({ evicted: gone, status: held(3, 620) });
    const { sent, send } = server(new Failed('NEEDS_FORCE', plan), planned({ evicted: gone, dryRun: false }));
    const { asked, ask } = asker(true);
    const result = await addAsAWhole(send, ask, params, 'lib/');
    assert.equal(asked.length, 1);
    assert.equal(asked[0]?.message, "Adding lib/ (2 files, 2,000 tokens) would evict 2 of the window's 3 items (500 tokens), more than half of it.");
    assert.match(asked[0].detail, /• textwrap\.py:373-384 \(300 tokens\)\n• notes \(200 tokens\)/);
    assert.equal(asked[0].confirm, 'Add and Evict 2');
    assert.deepEqual(sent.map((p) => p.force), [false, true]);
    assert.deepEqual(sent[1]?.targets, params.targets);
    assert.equal(result?.evicted.length, 2);
  });

  it('changes nothing when the person says no', async () => {
    const { sent, send } = server(new Failed('NEEDS_FORCE', planned({ evicted: gone })));
    const { ask } = asker(false);
    assert.equal(await addAsAWhole(send, ask, params, 'lib/'), undefined);
    assert.deepEqual(sent.map((p) => p.force), [false]);
  });

  it('refuses with the figures, and names what the folder left out, when the set cannot fit beside the pinned items', async () => {
    const data: NoRoomData = { tokens: 11_532, items: 12, availableTokens: 3200, availableItems: 48, shortTokens: 8332, shortItems: 0 };
    const refusal = new Failed('NO_ROOM', data);
    refusal.message = 'the 12 files take 11,532 tokens, ... nothing was added (...). Left out besides: lib/c.bin, binary; lib/.env, may hold secrets; name it to add it';
    const { send } = server(refusal);
    const { asked, ask } = asker(true);
    await assert.rejects(addAsAWhole(send, ask, params, 'lib/'), (e: unknown) => {
      assert.ok(e instanceof Refusal);
      assert.equal(
        e.message,
        'lib/ does not fit: it needs 11,532 tokens in 12 files, and beside the pinned items the window has room for ' +
          '3,200 tokens and 48 items (8,332 tokens too many). Nothing was added: choose fewer files, unpin items, or raise contextls.maxTokens. ' +
          'Left out besides: lib/c.bin, binary; lib/.env, may hold secrets; name it to add it.',
      );
      return true;
    });
    assert.equal(asked.length, 0);
  });

  it('passes any other error on', async () => {
    const { send } = server(new Failed('OUTSIDE_WORKSPACE', undefined));
    await assert.rejects(addAsAWhole(send, asker(true).ask, params, 'lib/'), /OUTSIDE_WORKSPACE/);
  });
});

describe('evictsMostOf (the one threshold for asking)', () => {
  const some = (...tokens: number[]) => tokens.map((t) => ({ tokens: t }));
  it('is more than half of the items or of the tokens, never half exactly', () => {
    assert.equal(evictsMostOf(some(10, 10), { items: 4, tokens: 1000 }), false);
    assert.equal(evictsMostOf(some(10, 10, 10), { items: 4, tokens: 1000 }), true);
    assert.equal(evictsMostOf(some(500), { items: 10, tokens: 1000 }), false);
    assert.equal(evictsMostOf(some(501), { items: 10, tokens: 1000 }), true);
    assert.equal(evictsMostOf([], { items: 0, tokens: 0 }), false);
  });
});

describe('addQuestion', () => {
  it('never says the count twice: "2 files (2,000 tokens)", not "2 files (2 files, …)"', () => {
    const q = addQuestion(planned({ evicted: gone, status: held(3, 620) }), '2 files');
    assert.equal(q.message, "Adding 2 files (2,000 tokens) would evict 2 of the window's 3 items (500 tokens), more than half of it.");
  });
  it('names a pinned region that would become a whole file', () => {
    const q = addQuestion(planned({ evicted: gone, pinnedGrowth: [{ id: 'ctx-1', label: 'lib/a.py:3-9', absorbed: ['ctx-1'], tokensBefore: 80, tokensAfter: 900 }] }), 'lib/');
    assert.match(q.detail, /Pinned lib\/a\.py:3-9 becomes the whole file: 80 → 900 tokens\./);
  });
  it('lists at most eight items, then how many more', () => {
    const many = Array.from({ length: 11 }, (_, i) => item({ id: `ctx-${i + 1}`, label: `f${i + 1}.py`, tokens: 10 }));
    const q = addQuestion(planned({ evicted: many }), 'lib/');
    assert.match(q.detail, /• f8\.py \(10 tokens\)\n• and 3 more$/);
  });
  it('says "1 token", and groups thousands', () => {
    assert.deepEqual(labelList([item({ label: 'a', tokens: 1 }), item({ label: 'b', tokens: 3653 })]), ['• a (1 token)', '• b (3,653 tokens)']);
  });
});

describe('noRoomMessage', () => {
  it('says both shortfalls', () => {
    const text = noRoomMessage({ tokens: 100, items: 60, availableTokens: 4000, availableItems: 50, shortTokens: 0, shortItems: 10 }, '3 files and folders');
    assert.match(text, /^3 files and folders does not fit: it needs 100 tokens in 60 files.*\(10 items too many\)/);
  });
});

describe('addReport', () => {
  it('says what was added, evicted, left out (by name) and refused', () => {
    const { summary, problems, warn } = addReport(
      planned({
        dryRun: false,
        evicted: gone,
        skipped: [
          { path: 'lib/c.bin', reason: 'binary' },
          { path: 'lib/.env', reason: 'may hold secrets; name it to add it' },
        ],
        refused: [{ target: '/etc/passwd', code: -31002, message: '/etc/passwd is outside the workspace' }],
      }),
      'lib/',
    );
    assert.equal(summary, 'contextls: added lib/ (2 files, 2,000 tokens); evicted 2 items; left out lib/c.bin (binary), lib/.env (may hold secrets; name it to add it)');
    assert.equal(problems, '/etc/passwd: /etc/passwd is outside the workspace');
    assert.equal(warn, true);
  });
  it('says "merged" for files that were in the window already, and a pinned region grown to its file', () => {
    const { summary } = addReport(
      planned({ dryRun: false, merged: { 'ctx-2': 'ctx-5' }, pinnedGrowth: [{ id: 'ctx-5', label: 'lib/a.py', absorbed: ['ctx-2'], tokensBefore: 80, tokensAfter: 900 }] }),
      '2 files',
    );
    assert.equal(summary, 'contextls: added 2 files (2,000 tokens); merged ctx-2 into them; pinned lib/a.py is the whole file now (900 tokens)');
  });
  it('says plainly when nothing was added, and why, naming the refused targets', () => {
    const report = addReport(planned({ items: [], tokens: 0, dryRun: false, skipped: [{ path: 'big/a.py', reason: 'over the token budget on its own' }] }), 'big/');
    assert.deepEqual(report, { summary: 'contextls: nothing added from big/: left out big/a.py (over the token budget on its own)', problems: undefined, warn: true });
    const refused = addReport(planned({ items: [], tokens: 0, dryRun: false, refused: [{ target: 'a.py', code: -31004, message: 'item has 9,000 tokens' }] }), '2 files');
    assert.equal(refused.summary, 'contextls: nothing added from 2 files: refused a.py');
    assert.equal(addReport(planned({ dryRun: false }), 'lib/').warn, false);
  });
});

describe('addedWords', () => {
  it('says "merged" when an add joined items already there, and "already" when the same was added again', () => {
    const add = (label: string, merged: string[] = [], deduplicated = false) => ({ item: item({ label }), merged, deduplicated });
    assert.equal(addedWords([add('a.py:1-9')]), 'added a.py:1-9');
    // (the server says deduplicated for a merge too)
    assert.equal(addedWords([add('a.py:1-20', ['ctx-2', 'ctx-3'], true)]), 'added a.py:1-20; merged ctx-2, ctx-3 into it');
    assert.equal(addedWords([add('a.py', [], true)]), 'a.py was in the window already: read again');
  });
});

describe('restoreReport', () => {
  it('says what came back and what made room', () => {
    const result: RestoreResult = { items: [item({ label: 'old.py:1-40' })], evicted: gone, status: status(), dryRun: false, alreadyInWindow: ['ctx-4'], merged: {} };
    assert.equal(restoreReport(result), 'contextls: restored old.py:1-40; ctx-4 is already in the window; evicted textwrap.py:373-384, notes to make room');
  });
});

describe('describeTargets', () => {
  it('names one target, or counts files and folders', () => {
    assert.equal(describeTargets([{ path: 'json', folder: true }]), 'json/');
    assert.equal(describeTargets([{ path: 'a.py', folder: false }]), 'a.py');
    assert.equal(describeTargets([{ path: 'a.py', folder: false }, { path: 'b.py', folder: false }]), '2 files');
    assert.equal(describeTargets([{ path: 'a', folder: true }, { path: 'b', folder: true }]), '2 folders');
    assert.equal(describeTargets([{ path: 'a.py', folder: false }, { path: 'b', folder: true }]), 'a file and a folder');
    assert.equal(
      describeTargets([{ path: 'a.py', folder: false }, { path: 'c.py', folder: false }, { path: 'b', folder: true }]),
      '2 files and a folder',
    );
  });
});
