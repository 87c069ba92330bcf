// What the startup check reads: a window is there once something happened in it; the shared
// daemon is asked with the program the server runs, and a server of its own is never asked.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { daemonRuns, daemonStatusCommand, hasWindow } from '../../src/startupRules';
import { status } from './fixtures';

describe('hasWindow', () => {
  it('is true once the window changed, or holds items or an archive; false for a folder never used', () => {
    assert.equal(hasWindow(status({ revision: 0, itemCount: 0, archivedCount: 0 })), false);
    assert.equal(hasWindow(status({ revision: 3, itemCount: 0, archivedCount: 0 })), true);
    assert.equal(hasWindow(status({ revision: 0, itemCount: 0, archivedCount: 2 })), true);
  });
});

describe('daemonStatusCommand', () => {
  it('asks the program the server runs, with its database, and only of the shared daemon', () => {
    assert.deepEqual(daemonStatusCommand(['/home/u/.local/bin/contextls', 'connect'], undefined), ['/home/u/.local/bin/contextls', '--json', 'daemon', 'status']);
    assert.deepEqual(daemonStatusCommand(['/usr/bin/python3', '-m', 'contextls', 'connect'], '/tmp/db'), ['/usr/bin/python3', '-m', 'contextls', '--json', '--storage', '/tmp/db', 'daemon', 'status']);
    assert.equal(daemonStatusCommand(['contextls', 'serve'], undefined), undefined);
  });
  it('reads whether it runs, and nothing else as yes', () => {
    assert.equal(daemonRuns('{"version": "0.1.0", "pid": 2165, "daemon": true, "socket": "/run/x.sock"}'), true);
    assert.equal(daemonRuns('{"running": true, "pid": 2165}'), true);
    assert.equal(daemonRuns('{"running": false, "socket": "/run/x.sock"}'), false);
    assert.equal(daemonRuns('Traceback'), false);
  });
});
