// The names that usually hold credentials are the server's: the same lists, the same answers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isSecretPath, NOT_SECRET_PATTERNS, SECRET_FILE_PATTERNS } from '../../src/secretPaths';

const repo = join(__dirname, '..', '..', '..', '..', '..');
const python = join(repo, '.venv', 'bin', 'python');

describe('secret paths', () => {
  it('are the server\'s lists (contextls.core.secrets)', () => {
    assert.ok(existsSync(python), `the repository's .venv is needed (make setup): ${python}`);
    const out = spawnSync(python, ['-c', 'import json; from contextls.core.secret_paths import SECRET_FILE_PATTERNS as s, NOT_SECRET_PATTERNS as n; print(json.dumps([list(s), list(n)]))'], {
      encoding: 'utf8',
    });
    assert.equal(out.status, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout), [SECRET_FILE_PATTERNS, NOT_SECRET_PATTERNS]);
  });
  it('match names as the server does: case-blind, the name only, templates and public keys shared', () => {
    for (const name of ['.env', 'app/.env.local', 'prod.ENV', 'id_rsa', 'keys/server.pem', '.netrc', 'secrets.yaml', 'service-account-1.json', 'x.tfvars', '.npmrc']) {
      assert.equal(isSecretPath(name), true, name);
    }
    for (const name of ['.env.example', 'id_rsa.pub', 'environment.py', 'README.md', 'envs/a.py', 'secret_santa.py', 'key.py']) {
      assert.equal(isSecretPath(name), false, name);
    }
  });
});
