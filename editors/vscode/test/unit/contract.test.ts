// The extension's contributions agree with the server's schema: settings (names, defaults,
// enums), error codes, and the methods the extension calls.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCodes } from '../../src/generated/protocol';
import { SERVER_KEYS, serverSettings } from '../../src/settings';

const root = join(__dirname, '..', '..', '..');
const extensionDir = join(root, '..', '..', 'editors', 'vscode');
const schema = JSON.parse(readFileSync(join(root, '..', '..', 'clients', 'protocol', 'contextls.schema.json'), 'utf8')) as {
  'x-errorCodes': Record<string, number>;
  'x-methods': Record<string, unknown>;
  $defs: { Settings: { properties: Record<string, { default?: unknown; enum?: unknown[]; anyOf?: { enum?: unknown[] }[]; $ref?: string }> } } & Record<string, { enum?: unknown[] }>;
};
const manifest = JSON.parse(readFileSync(join(extensionDir, 'package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, { default?: unknown; enum?: unknown[]; description?: string; markdownDescription?: string }> } };
};

describe('settings', () => {
  const contributed = manifest.contributes.configuration.properties;
  const serverSide = schema.$defs.Settings.properties;

  for (const key of SERVER_KEYS) {
    it(`contextls.${key} is contributed with the server's default and values`, () => {
      const mine = contributed[`contextls.${key}`];
      const theirs = serverSide[key];
      assert.ok(mine, `package.json lacks contextls.${key}`);
      assert.ok(theirs, `the server has no setting ${key}`);
      assert.ok(mine.description ?? mine.markdownDescription, 'it has a description');
      // storage: the server's null default is an empty string in the UI
      assert.deepEqual(mine.default, key === 'storage' ? '' : theirs.default);
      if (theirs.enum) assert.deepEqual([...(mine.enum ?? [])].sort(), [...theirs.enum].sort());
    });
  }

  it('sends the flat settings, an empty storage as null (the server default)', () => {
    const values: Record<string, unknown> = { maxItems: 5, maxTokens: 100, encoding: 'cl100k_base', evictionPolicy: 'fifo', maxFileBytes: 10, storage: ' ' };
    assert.deepEqual(serverSettings((k) => values[k]), { ...values, storage: null });
    assert.deepEqual(serverSettings((k) => (k === 'storage' ? '/tmp/db' : undefined)), { storage: '/tmp/db' });
  });
});

describe('error codes', () => {
  it('are the schema\'s, by name', () => {
    assert.deepEqual(ErrorCodes, schema['x-errorCodes']);
  });
});
