import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { problemLines, problemsText } from '../../src/problems';

describe('problemsText', () => {
  it('lists file, 1-based line and column, severity, message and origin, in order', () => {
    const text = problemsText('src/ä.ts', [
      { line: 9, character: 0, severity: 1, message: 'unused', source: 'ts', code: 6133 },
      { line: 2, character: 4, severity: 0, message: 'bad type' },
    ]);
    assert.equal(text, 'src/ä.ts:3:5: error: bad type\nsrc/ä.ts:10:1: warning: unused [ts 6133]');
  });
});

describe('problemLines', () => {
  it('spans the first to the last problem, 1-based', () => {
    assert.deepEqual(problemLines([{ line: 9, character: 0, severity: 0, message: '' }, { line: 2, character: 0, severity: 0, message: '' }]), {
      startLine: 3,
      endLine: 10,
    });
    assert.equal(problemLines([]), undefined);
  });
});
