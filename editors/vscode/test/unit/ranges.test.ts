import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileOf, lineSpanOf, regionOf } from '../../src/ranges';
import { item } from './fixtures';

const pos = (line: number, character: number) => ({ line, character });

describe('regionOf', () => {
  const lines = ['RÉSUMÉ = "😀 ünïcode"', ''];
  const length = (line: number) => (lines[line] ?? '').length;

  it('sends a selection unchanged (VS Code positions are UTF-16, like LSP)', () => {
    const start = (lines[0] ?? '').indexOf('ünïcode');
    assert.equal(start, 13, 'the emoji counts as two UTF-16 code units');
    assert.deepEqual(regionOf({ start: pos(0, start), end: pos(0, start + 8) }, length), {
      start: pos(0, 13),
      end: pos(0, 21),
    });
  });
  it('takes the whole current line for an empty selection', () => {
    assert.deepEqual(regionOf({ start: pos(0, 4), end: pos(0, 4) }, length), { start: pos(0, 0), end: pos(0, 21) });
  });
  it('keeps a selection that ends at the start of the next line', () => {
    assert.deepEqual(regionOf({ start: pos(0, 0), end: pos(1, 0) }, length), { start: pos(0, 0), end: pos(1, 0) });
  });
});

describe('lineSpanOf', () => {
  it('turns 1-based metadata lines into a 0-based span', () => {
    assert.deepEqual(lineSpanOf(item()), { uri: 'file:///w/a.py', startLine: 2, endLine: 3 });
  });
  it('reads a single line when endLine is missing or before startLine', () => {
    assert.deepEqual(lineSpanOf(item({ metadata: { uri: 'file:///w/a.py', startLine: 5 } })), {
      uri: 'file:///w/a.py',
      startLine: 4,
      endLine: 4,
    });
    assert.equal(lineSpanOf(item({ metadata: { uri: 'file:///w/a.py', startLine: 5, endLine: 2 } }))?.endLine, 4);
  });
  it('has no span for whole files, text, or bad metadata', () => {
    assert.equal(lineSpanOf(item({ kind: 'file', metadata: { uri: 'file:///w/a.py' } })), undefined);
    assert.equal(lineSpanOf(item({ kind: 'text', metadata: {} })), undefined);
    assert.equal(lineSpanOf(item({ metadata: { uri: 'file:///w/a.py', startLine: 0 } })), undefined);
    assert.equal(lineSpanOf(item({ metadata: { uri: 'file:///w/a.py', startLine: '3' } })), undefined);
  });
  it('finds the file of any item that has one', () => {
    assert.equal(fileOf(item({ kind: 'file', metadata: { uri: 'file:///w/b.py' } })), 'file:///w/b.py');
    assert.equal(fileOf(item({ kind: 'text', metadata: {} })), undefined);
  });
});
