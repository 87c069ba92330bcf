"""``contextls connect``: an editor's stdio, joined to the shared daemon's socket.

An editor that spawns its server (``contextls serve --stdio``) gets a
process of its own; spawning ``contextls connect`` instead reaches the
user's daemon, so every editor and the CLI share the same windows. Bytes go
through as they come, both ways, until either side closes.
"""

from __future__ import annotations

import os
import selectors
import socket
import sys

from contextls_client.daemon import connect_or_start

CHUNK = 256 * 1024


def bridge(storage: str | None) -> int:
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    selector = _watching(stdin)  # before the daemon is reached (or started)
    sock = connect_or_start(storage)
    selector.register(sock, selectors.EVENT_READ, "daemon")
    try:
        while True:
            for key, _ in selector.select():
                if key.data == "editor":
                    data = os.read(stdin, CHUNK)
                    if not data:  # the editor closed our stdin: let the daemon finish
                        selector.unregister(stdin)
                        sock.shutdown(socket.SHUT_WR)
                        continue
                    sock.sendall(data)
                else:
                    data = sock.recv(CHUNK)
                    if not data:
                        return 0
                    _write_all(stdout, data)
    except (BrokenPipeError, ConnectionResetError):
        return 0
    except KeyboardInterrupt:
        return 130
    finally:
        sock.close()


def _watching(stdin: int) -> selectors.BaseSelector:
    """A selector watching ``stdin``: epoll's, or, for what epoll cannot watch (a regular
    file, ``/dev/null``: always readable), ``select``'s."""
    selector: selectors.BaseSelector = selectors.DefaultSelector()
    try:
        selector.register(stdin, selectors.EVENT_READ, "editor")
    except PermissionError:
        selector.close()
        selector = selectors.SelectSelector()
        selector.register(stdin, selectors.EVENT_READ, "editor")
    return selector


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
