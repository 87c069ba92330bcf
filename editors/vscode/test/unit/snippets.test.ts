import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { flatSnippet, fromFirstHighlight, utf16Spans } from '../../src/snippets';

const marked = (text: string, spans: readonly (readonly [number, number])[]): string[] => spans.map(([s, e]) => text.slice(s, e));

describe('utf16Spans', () => {
  it('moves code point offsets past characters outside the BMP', () => {
    const text = '😀 budget 😀 token';
    // code points: 😀=0, ' '=1, budget=2..8, ' '=8, 😀=9, ' '=10, token=11..16
    const spans = utf16Spans(text, [[2, 8], [11, 16]]);
    assert.deepEqual(marked(text, spans), ['budget', 'token']);
  });
  it('clamps spans past the end and drops empty ones', () => {
    assert.deepEqual(utf16Spans('abc', [[1, 99], [2, 2]]), [[1, 3]]);
  });
});

describe('flatSnippet', () => {
  it('puts the snippet on one line and keeps the highlights on their words', () => {
    const snippet = '  def check_budget(self):\n        if self.tokens > 😀 budget:\n';
    const words = ['check_budget', 'budget'];
    // the server's offsets: code points (Array.from walks a string by code point)
    const codePoints = (text: string): number => Array.from(text).length;
    const spans: [number, number][] = [];
    let from = 0;
    for (const w of words) {
      const at = snippet.indexOf(w, from);
      const start = codePoints(snippet.slice(0, at));
      spans.push([start, start + codePoints(w)]);
      from = at + w.length;
    }
    const flat = flatSnippet(snippet, spans);
    assert.equal(flat.text, 'def check_budget(self): if self.tokens > 😀 budget:');
    assert.deepEqual(marked(flat.text, flat.highlights), words);
  });
  it('ends a highlight before the space that follows it', () => {
    const flat = flatSnippet('foo   bar', [[0, 3]]);
    assert.equal(flat.text, 'foo bar');
    assert.deepEqual(flat.highlights, [[0, 3]]);
  });
});

describe('fromFirstHighlight', () => {
  it('starts a little before the first highlight, at a word, and moves the highlights', () => {
    const text = 'one two three four five six seven eight nine ten budget eleven';
    const at = text.indexOf('budget');
    const cut = fromFirstHighlight(text, [[at, at + 6]], 10);
    assert.equal(cut.text, '…nine ten budget eleven');
    assert.deepEqual(marked(cut.text, cut.highlights), ['budget']);
  });
  it('keeps a text whose first highlight is near its start', () => {
    assert.deepEqual(fromFirstHighlight('a budget', [[2, 8]]), { text: 'a budget', highlights: [[2, 8]] });
    assert.deepEqual(fromFirstHighlight('no highlight at all', []), { text: 'no highlight at all', highlights: [] });
  });
});
