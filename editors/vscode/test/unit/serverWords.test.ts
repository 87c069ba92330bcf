// The server's secret warning, read and said again in this surface's words: one notice per item,
// naming every kind, and no command of another surface.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { listed, secretNotice, secretWarning } from '../../src/serverWords';

const server = (where: string, kind: string) =>
  `contextls: ${where} seems to contain ${kind}; it is now in the context an LLM will see (forget it with \`contextls forget\` if it should not be)`;

describe('secretWarning', () => {
  it('takes the server\'s warning apart', () => {
    assert.deepEqual(secretWarning(server('.env', 'a password assignment')), { where: '.env', kind: 'a password assignment' });
    assert.deepEqual(secretWarning(server('ctx-7 (text)', 'an AWS access key id')), { where: 'ctx-7 (text)', kind: 'an AWS access key id' });
    assert.equal(secretWarning('contextls: the database was made private'), undefined);
  });
  it('says it once for every kind, with no command of the command line', () => {
    const notice = secretNotice('.env', ['an AWS access key id', 'a GitHub token', 'a password assignment']);
    assert.equal(
      notice,
      'contextls: .env seems to contain an AWS access key id, a GitHub token and a password assignment; it is now in the context a model will see. Forget it for good if it should not be there.',
    );
    assert.doesNotMatch(notice, /contextls forget/);
    assert.equal(listed(['a']), 'a');
  });
});
