// The bulk add and the restore against the contract: a dry run first, a question before any
// eviction, force only on consent, and the server's figures when the set cannot fit.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AddFilesParams, AddFilesResult, NoRoomData, RestoreResult } from '../../src/generated/protocol';
import { addAsAWhole, addQuestion, addReport, describeTargets, noRoomMessage, Refusal, restoreAsked, restoreQuestion, type Question } from '../../src/planned';
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

describe('addAsAWhole', () => {
  it('adds at once, without asking, when nothing the window holds would go', async () => {
    const { sent, send } = server(planned(), planned({ dryRun: false }));
    const { asked, ask } = asker(false);
    const result = await addAsAWhole(send, ask, params, 'lib/');
    assert.equal(asked.length, 0);
    assert.deepEqual(sent.map((p) => [p.dryRun, p.force]), [[true, false], [false, false]]);
    assert.equal(result?.dryRun, false);
  });

  it('asks, naming what would go, and sends force only on consent', async () => {
    const { sent, send } = server(planned({ evicted: gone }), planned({ evicted: gone, dryRun: false }));
    const { asked, ask } = asker(true);
    const result = await addAsAWhole(send, ask, params, 'lib/');
    assert.equal(asked.length, 1);
    assert.match(asked[0]?.message ?? '', /^Adding lib\/ \(2 files, 2,000 tokens\) evicts 2 items of the window\.$/);
    assert.match(asked[0]?.detail ?? '', /• textwrap\.py:373-384 \(300 tokens\)\n• notes \(200 tokens\)/);
    assert.equal(asked[0]?.confirm, 'Add and Evict 2');
    assert.deepEqual(sent.map((p) => [p.dryRun, p.force]), [[true, false], [false, true]]);
    assert.deepEqual(sent[1]?.targets, params.targets);
    assert.equal(result?.evicted.length, 2);
  });

  it('changes nothing when the person says no', async () => {
    const { sent, send } = server(planned({ evicted: gone }));
    const { ask } = asker(false);
    assert.equal(await addAsAWhole(send, ask, params, 'lib/'), undefined);
    assert.equal(sent.length, 1);
    assert.equal(sent[0]?.dryRun, true);
  });

  it('takes the plan a NEEDS_FORCE error carries, and asks with it', async () => {
    const { sent, send } = server(new Failed('NEEDS_FORCE', planned({ evicted: gone })), planned({ evicted: gone, dryRun: false }));
    const { asked, ask } = asker(true);
    await addAsAWhole(send, ask, params, 'lib/');
    assert.equal(asked.length, 1);
    assert.equal(sent[1]?.force, true);
  });

  it('asks again when the window changed between the plan and the add', async () => {
    const more = [...gone, item({ id: 'ctx-3', label: 'c.py', tokens: 50 })];
    const { sent, send } = server(planned(), new Failed('NEEDS_FORCE', planned({ evicted: more })), planned({ evicted: more, dryRun: false }));
    const { asked, ask } = asker(true);
    const result = await addAsAWhole(send, ask, params, 'lib/');
    assert.equal(asked.length, 1);
    assert.match(asked[0]?.message ?? '', /evicts 3 items/);
    assert.deepEqual(sent.map((p) => [p.dryRun, p.force]), [[true, false], [false, false], [false, true]]);
    assert.equal(result?.evicted.length, 3);
  });

  it('refuses with the figures when the set cannot fit beside the pinned items', async () => {
    const data: NoRoomData = { tokens: 11_532, items: 12, availableTokens: 3200, availableItems: 48, shortTokens: 8332, shortItems: 0 };
    const { send } = server(new Failed('NO_ROOM', data));
    const { asked, ask } = asker(true);
    await assert.rejects(addAsAWhole(send, ask, params, 'lib/'), (e: unknown) => {
      assert.ok(e instanceof Refusal);
      assert.equal(
        e.message,
        'lib/ does not fit: it needs 11,532 tokens in 12 files, and beside the pinned items the window has room for ' +
          '3,200 tokens and 48 items (8,332 tokens too many). Nothing was added: choose fewer files, unpin items, or raise contextls.maxTokens.',
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

describe('addQuestion', () => {
  it('is not asked when nothing goes and nothing pinned grows', () => {
    assert.equal(addQuestion(planned(), 'lib/'), undefined);
  });
  it('names a pinned region that would become a whole file', () => {
    const q = addQuestion(planned({ pinnedGrowth: [{ id: 'ctx-1', label: 'lib/a.py:3-9', absorbed: ['ctx-1'], tokensBefore: 80, tokensAfter: 900 }] }), 'lib/');
    assert.ok(q);
    assert.match(q.message, /grows pinned items/);
    assert.match(q.detail, /Pinned lib\/a\.py:3-9 becomes the whole file: 80 → 900 tokens\./);
    assert.equal(q.confirm, 'Add');
  });
  it('lists at most eight items, then how many more', () => {
    const many = Array.from({ length: 11 }, (_, i) => item({ id: `ctx-${i + 1}`, label: `f${i + 1}.py`, tokens: 10 }));
    const q = addQuestion(planned({ evicted: many }), 'lib/');
    assert.match(q?.detail ?? '', /• f8\.py \(10 tokens\)\n• and 3 more$/);
  });
});

describe('noRoomMessage', () => {
  it('says both shortfalls', () => {
    const text = noRoomMessage({ tokens: 100, items: 60, availableTokens: 4000, availableItems: 50, shortTokens: 0, shortItems: 10 }, '3 files and folders');
    assert.match(text, /^3 files and folders does not fit: it needs 100 tokens in 60 files.*\(10 items too many\)/);
  });
});

describe('addReport', () => {
  it('says what was added, evicted, skipped by reason, and refused', () => {
    const { summary, problems, warn } = addReport(
      planned({
        dryRun: false,
        evicted: gone,
        skipped: [
          { path: 'lib/c.bin', reason: 'binary' },
          { path: 'lib/d.bin', reason: 'binary' },
          { path: 'lib/.env', reason: 'credentials' },
        ],
        refused: [{ target: '/etc/passwd', code: -31002, message: '/etc/passwd is outside the workspace' }],
      }),
      'lib/',
    );
    assert.equal(summary, 'contextls: added lib/: 2 files, 2,000 tokens; evicted 2 items; skipped 2 binary, 1 credentials');
    assert.equal(problems, '/etc/passwd: /etc/passwd is outside the workspace');
    assert.equal(warn, true);
  });
  it('says plainly when nothing was added, and why', () => {
    const report = addReport(planned({ items: [], tokens: 0, dryRun: false, skipped: [{ path: 'big/a.py', reason: 'over the token budget on its own' }] }), 'big/');
    assert.deepEqual(report, { summary: 'contextls: nothing added from big/: skipped 1 over the token budget on its own', problems: undefined, warn: true });
    assert.equal(addReport(planned({ dryRun: false }), 'lib/').warn, false);
  });
});

function restored(overrides: Partial<RestoreResult> = {}): RestoreResult {
  return {
    items: [item({ id: 'ctx-9', label: 'old.py:1-40', tokens: 700 })],
    evicted: [],
    status: status(),
    dryRun: true,
    alreadyInWindow: [],
    merged: {},
    ...overrides,
  };
}

describe('restoreAsked', () => {
  it('restores without asking when nothing would go', async () => {
    const sent: boolean[] = [];
    const { asked, ask } = asker(false);
    const result = await restoreAsked((p) => (sent.push(p.dryRun), Promise.resolve(restored({ dryRun: p.dryRun }))), ask, ['ctx-9']);
    assert.deepEqual(sent, [true, false]);
    assert.equal(asked.length, 0);
    assert.equal(result?.dryRun, false);
  });
  it('asks first when the restore would evict others, and stops on no', async () => {
    const sent: boolean[] = [];
    const { asked, ask } = asker(false);
    const result = await restoreAsked((p) => (sent.push(p.dryRun), Promise.resolve(restored({ evicted: gone, dryRun: p.dryRun }))), ask, ['ctx-9']);
    assert.equal(result, undefined);
    assert.deepEqual(sent, [true]);
    assert.match(asked[0]?.message ?? '', /^Restoring old\.py:1-40 evicts 2 items of the window\.$/);
    assert.equal(asked[0]?.confirm, 'Restore and Evict 2');
  });
  it('takes an older server\'s answer, which restored at once, as the result', async () => {
    const sent: boolean[] = [];
    const result = await restoreAsked((p) => (sent.push(p.dryRun), Promise.resolve(restored({ dryRun: false }))), asker(true).ask, ['ctx-9']);
    assert.deepEqual(sent, [true]);
    assert.equal(result?.items[0]?.id, 'ctx-9');
  });
  it('has no question when nothing goes', () => {
    assert.equal(restoreQuestion(restored()), undefined);
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
