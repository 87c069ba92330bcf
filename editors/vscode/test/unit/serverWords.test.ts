// A secret the server found, said in this surface's words: one notice per item, naming every
// kind, and no command of another surface.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { listed, secretNotice } from '../../src/serverWords';

describe('secretNotice', () => {
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
