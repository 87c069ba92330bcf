import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { groupsOf, iconOf, rowOf, viewOf } from '../../src/treeModel';
import { item } from './fixtures';

describe('rowOf', () => {
  it('shows label, tokens and the item\'s kind icon, and opens its lines', () => {
    const row = rowOf(item({ tokens: 3200 }));
    assert.equal(row.label, 'a.py:3-4');
    assert.equal(row.description, '3.2k tok');
    assert.equal(row.icon, 'code');
    assert.equal(row.contextValue, 'contextls.item.file'); // from a file: 'read again' in its menu
    assert.deepEqual(row.target, { span: { uri: 'file:///w/a.py', startLine: 2, endLine: 3 } });
  });
  it('marks pinned and stale items', () => {
    const row = rowOf(item({ pinned: true, stale: true }));
    assert.equal(row.description, '120 tok · pinned · stale');
    assert.equal(row.icon, 'pinned');
    assert.equal(row.contextValue, 'contextls.item.pinned.file.stale'); // offers 'read again' inline
    assert.match(row.tooltip, /Pinned/);
    assert.match(row.tooltip, /Stale/);
  });
  it('has a spoken label in words, and no file marker for a note', () => {
    assert.equal(rowOf(item({ pinned: true, stale: true })).accessibleLabel, 'a.py:3-4, code, 120 tokens, pinned, stale: its text changed');
    assert.equal(rowOf(item({ kind: 'text', metadata: {} })).contextValue, 'contextls.item');
  });
  it('says how each item is shown, and offers Show Whole or Show as Outline where they apply', () => {
    const outlined = item({ kind: 'file', view: 'outline', metadata: { uri: 'file:///w/b.py', path: 'b.py' } });
    assert.equal(viewOf(outlined), 'outline');
    assert.equal(rowOf(outlined).description, '120 tok · outline');
    assert.equal(rowOf(outlined).contextValue, 'contextls.item.file.outline');
    assert.match(rowOf(outlined).tooltip, /outline: signatures, no bodies/);
    assert.equal(rowOf(item({ kind: 'file', metadata: { uri: 'file:///w/b.py' } })).contextValue, 'contextls.item.file.outlinable');
    const method = item({ metadata: { uri: 'file:///w/a.py', startLine: 3, endLine: 4, symbol: 'A.f', symbolKind: 'method' } });
    assert.equal(rowOf(method).description, '120 tok · definition');
    assert.equal(rowOf(method).contextValue, 'contextls.item.file'); // a method has no outline
    const cls = item({ metadata: { uri: 'file:///w/a.py', startLine: 3, endLine: 9, symbol: 'A', symbolKind: 'class' } });
    assert.equal(rowOf(cls).contextValue, 'contextls.item.file.outlinable');
    const map = item({ kind: 'text', view: 'map', metadata: {} });
    assert.equal(rowOf(map).description, '120 tok · map');
    assert.equal(rowOf(map).accessibleLabel, 'a.py:3-4, text, map, 120 tokens');
  });
  it('opens whole files as files and has no target for text', () => {
    assert.deepEqual(rowOf(item({ kind: 'file', metadata: { uri: 'file:///w/b.py' } })).target, { file: 'file:///w/b.py' });
    assert.equal(rowOf(item({ kind: 'text', metadata: {} })).target, undefined);
  });
});

describe('iconOf', () => {
  it('has an icon per kind, and one for symbols', () => {
    assert.deepEqual(
      (['code', 'text', 'file', 'repl-history', 'error', 'custom'] as const).map((kind) => iconOf({ kind, metadata: {} })),
      ['code', 'note', 'file', 'terminal', 'error', 'symbol-misc'],
    );
    assert.equal(iconOf({ kind: 'code', metadata: { symbol: 'main' } }), 'symbol-method');
  });
});

describe('groupsOf', () => {
  it('lists newest first in one group when nothing is pinned', () => {
    const groups = groupsOf([
      item({ id: 'ctx-1', timestamp: 1 }),
      item({ id: 'ctx-3', timestamp: 3 }),
      item({ id: 'ctx-2', timestamp: 3 }),
    ]);
    assert.equal(groups.length, 1);
    assert.deepEqual(groups[0]?.rows.map((r) => r.id), ['ctx-3', 'ctx-2', 'ctx-1']);
  });
  it('groups pinned items above the others', () => {
    const groups = groupsOf([item({ id: 'ctx-1', timestamp: 1, pinned: true }), item({ id: 'ctx-2', timestamp: 2 })]);
    assert.deepEqual(
      groups.map((g) => [g.label, g.rows.map((r) => r.id)]),
      [
        ['Pinned (1)', ['ctx-1']],
        ['Window (1)', ['ctx-2']],
      ],
    );
  });
});
