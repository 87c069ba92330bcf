import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { installDirs, locateProgram, searchedPlaces } from '../../src/locate';

const HOME = '/home/ada';

describe('locateProgram', () => {
  it('takes PATH first', () => {
    const found = locateProgram('contextls', { PATH: '/usr/bin:/opt/x/bin' }, HOME, (f) => f === '/opt/x/bin/contextls' || f === '/home/ada/.local/bin/contextls', 'linux');
    assert.deepEqual(found, { path: '/opt/x/bin/contextls', via: 'path' });
  });
  it('finds a pipx or uv install in ~/.local/bin when the editor\'s PATH lacks it', () => {
    const found = locateProgram('contextls', { PATH: '/usr/bin:/bin' }, HOME, (f) => f === '/home/ada/.local/bin/contextls', 'linux');
    assert.deepEqual(found, { path: '/home/ada/.local/bin/contextls', via: 'install-dir' });
  });
  it('honours PIPX_BIN_DIR, UV_TOOL_BIN_DIR, XDG_BIN_HOME and XDG_DATA_HOME/../bin', () => {
    for (const [env, file] of [
      [{ PIPX_BIN_DIR: '/p/bin' }, '/p/bin/contextls'],
      [{ UV_TOOL_BIN_DIR: '/u/bin' }, '/u/bin/contextls'],
      [{ XDG_BIN_HOME: '/x/bin' }, '/x/bin/contextls'],
      [{ XDG_DATA_HOME: '/d/share' }, '/d/bin/contextls'],
    ] as const) {
      assert.deepEqual(locateProgram('contextls', env, HOME, (f) => f === file, 'linux'), { path: file, via: 'install-dir' }, JSON.stringify(env));
    }
  });
  it('takes a path as it is, and finds nothing that is not there', () => {
    assert.deepEqual(locateProgram('/opt/c/bin/contextls', {}, HOME, () => true, 'linux'), { path: '/opt/c/bin/contextls', via: 'path' });
    assert.equal(locateProgram('/opt/c/bin/contextls', {}, HOME, () => false, 'linux'), undefined);
    assert.equal(locateProgram('contextls', { PATH: '/usr/bin' }, HOME, () => false, 'linux'), undefined);
  });
});

describe('installDirs and searchedPlaces', () => {
  it('lists each directory once, ~/.local/bin last', () => {
    assert.deepEqual(installDirs({ XDG_BIN_HOME: '/home/ada/.local/bin', PIPX_BIN_DIR: '/p' }, HOME), ['/p', '/home/ada/.local/bin']);
  });
  it('names them for the not-found message', () => {
    assert.equal(searchedPlaces({}, HOME), 'PATH, ~/.local/bin');
  });
});
