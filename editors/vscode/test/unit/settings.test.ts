import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { explicitValue, foundBy, searchMode, searchPlaceholder, serverCommand, serverSettings, SERVER_KEYS, windowChange } from '../../src/settings';

describe('serverSettings', () => {
  it('sends only what the user set, so defaults never overwrite the window\'s own settings', () => {
    const set: Record<string, unknown> = { maxTokens: 16000 };
    const sent = serverSettings((key) => set[key]);
    assert.deepEqual(sent, { maxTokens: 16000, storage: null });
  });
  it('takes the folder\'s value over the workspace\'s over the user\'s, and never the default', () => {
    assert.equal(explicitValue({ globalValue: 1, workspaceValue: 2, workspaceFolderValue: 3 }), 3);
    assert.equal(explicitValue({ globalValue: 1, workspaceValue: 2 }), 2);
    assert.equal(explicitValue({ globalValue: 1 }), 1);
    assert.equal(explicitValue({}), undefined);
    assert.equal(explicitValue(undefined), undefined);
    assert.ok(SERVER_KEYS.includes('maxTokens'));
  });
});

describe('serverCommand', () => {
  const config = (values: Record<string, unknown>) => ({ get: (key: string) => values[key] });
  it('reaches the shared daemon unless told otherwise', () => {
    assert.equal(serverCommand(config({})), 'contextls connect');
    assert.equal(serverCommand(config({ 'contextls.server.shared': true })), 'contextls connect');
    assert.equal(serverCommand(config({ 'contextls.server.shared': false })), 'contextls serve');
  });
  it('uses the command the user gave, whatever shared says', () => {
    const given = { 'contextls.server.command': ' /opt/bin/contextls serve ', 'contextls.server.shared': true };
    assert.equal(serverCommand(config(given)), '/opt/bin/contextls serve');
    assert.equal(serverCommand(config({ 'contextls.server.command': '  ' })), 'contextls connect');
  });
});

describe('searchMode', () => {
  const config = (mode: unknown) => ({ get: (key: string) => (key === 'contextls.search.mode' ? mode : undefined) });
  it('lets the server choose unless a mode is set', () => {
    assert.equal(searchMode(config('auto')), undefined);
    assert.equal(searchMode(config(undefined)), undefined);
    assert.equal(searchMode(config('semantic')), 'semantic');
    assert.equal(searchMode(config('keyword')), 'keyword');
  });
  it('ignores a value the server would refuse', () => {
    assert.equal(searchMode(config('fuzzy')), undefined);
  });
  it('says how a hit was found in words', () => {
    assert.equal(foundBy(['semantic', 'keyword']), 'meaning+words');
    assert.equal(foundBy(['keyword']), 'words');
  });
});

describe('windowChange', () => {
  it('sends what the user set and resets what they reset, so the Settings UI and the window agree', () => {
    const set: Record<string, unknown> = { task: 'debugging' };
    assert.deepEqual(windowChange(['maxTokens', 'task'], (key) => set[key]), {
      settings: { task: 'debugging' },
      reset: ['maxTokens'],
    });
  });
  it('sends nothing for keys that did not change', () => {
    assert.deepEqual(windowChange([], () => 1), { settings: {}, reset: [] });
  });
});

describe('searchPlaceholder', () => {
  it('matches the mode the search runs in', () => {
    assert.match(searchPlaceholder('keyword', true), /^Words that occur/);
    assert.match(searchPlaceholder('semantic', false), /^Describe what you look for/);
    assert.match(searchPlaceholder('hybrid', false), /or a description/);
    // auto: the server searches by meaning too only when its semantic extra is installed
    assert.match(searchPlaceholder(undefined, true), /or a description/);
    assert.match(searchPlaceholder(undefined, false), /^Words that occur/);
  });
});
