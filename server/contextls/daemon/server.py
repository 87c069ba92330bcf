"""The daemon: one long-lived process per user and database, serving many LSP sessions.

Every connection is a session of its own (its workspace folders, its open
documents, its settings), and all of them share one service: the same
windows, one write lock, one watch. A change any of them makes is committed
once and pushed to every session that has the folder open (``hub``).

It listens on a Unix socket in the user's private runtime directory
(``places``); each connecting process must run as the same user
(``SO_PEERCRED``), and there is no TCP. A lock file held for the daemon's
whole life makes it the only one for its database: a second one started at
the same moment sees the lock and leaves. With no client for
``idle_timeout`` seconds it commits and exits; the next command starts it
again.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import signal
from pathlib import Path
from typing import IO

from contextls.common.places import peer_uid, socket_path
from contextls.lsp.handlers import register
from contextls.lsp.hub import Hub
from contextls.lsp.server import ContextServer, shared_service
from contextls.lsp.transport import TURN_SECONDS, FrameProtocol

log = logging.getLogger(__name__)

DEFAULT_IDLE_TIMEOUT = 900.0
"""Seconds without any client before the daemon exits (an editor's connection counts)."""


class AlreadyRunning(Exception):
    """Another daemon holds this database's lock."""


class DaemonConnection(FrameProtocol):
    """One client's session on the daemon."""

    def __init__(self, daemon: Daemon, server: ContextServer) -> None:
        super().__init__(server, writes_back=True)
        self._daemon = daemon
        self._link: asyncio.BaseTransport | None = None
        # Nobody awaits the end of a daemon session's input (see ``eof_received``).
        self.done.add_done_callback(lambda done: done.cancelled() or done.exception())

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        uid = peer_uid(sock) if sock is not None else -1
        if uid != os.getuid():
            log.warning("refused a connection from uid %d", uid)
            transport.close()
            return
        self._link = transport
        super().connection_made(transport)
        self._daemon.opened(self)

    def handle_waiting(self, seconds: float | None = TURN_SECONDS) -> None:
        try:
            super().handle_waiting(seconds)
        except SystemExit:  # the `exit` notification ends this session, not the daemon
            if self._link is not None:
                self._link.close()

    def eof_received(self) -> bool:
        super().eof_received()
        self._server.end_of_turn()
        if self._link is not None:
            self._link.close()  # after what is buffered has been written
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self._link is not None:
            self._daemon.closed(self)
            self._link = None

    def leave(self) -> None:
        self._daemon.hub.leave(self._server)


class Daemon:
    def __init__(
        self, storage: str | None, idle_timeout: float = DEFAULT_IDLE_TIMEOUT, log_file: str = ""
    ) -> None:
        self.hub = Hub(idle_timeout)
        self.hub.log = log_file
        self.service = shared_service(self.hub)
        self.service.use_storage(storage, "normal")
        self.service.fixed_storage = True
        self.idle_timeout = idle_timeout
        self.connections: set[DaemonConnection] = set()
        self._stopped: asyncio.Future[None] | None = None
        self._idle: asyncio.TimerHandle | None = None

    def accept(self) -> DaemonConnection:
        server = ContextServer(self.hub, self.service)
        register(server)
        return DaemonConnection(self, server)

    def opened(self, connection: DaemonConnection) -> None:
        self.connections.add(connection)
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        log.debug("a client connected (%d now)", len(self.connections))

    def closed(self, connection: DaemonConnection) -> None:
        self.connections.discard(connection)
        connection.leave()
        try:
            self.service.commit()
        except Exception:
            log.exception("committing after a client left failed")
        log.debug("a client left (%d now)", len(self.connections))
        if not self.connections:
            self._arm_idle()

    def _arm_idle(self) -> None:
        if self._idle is None:
            self._idle = asyncio.get_running_loop().call_later(self.idle_timeout, self.stop)

    def stop(self) -> None:
        if self._stopped is not None and not self._stopped.done():
            self._stopped.set_result(None)

    async def serve(self, path: Path) -> None:
        loop = asyncio.get_running_loop()
        self._stopped = loop.create_future()
        self.hub.socket = str(path)
        old_umask = os.umask(0o077)  # the socket is born private
        try:
            listener = await loop.create_unix_server(self.accept, path=str(path))
        finally:
            os.umask(old_umask)
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self.stop)
        # The database opens now, so a bad one is in the log at once.
        database = self.service.store.location
        log.info("contextls daemon %d serves %s on %s", os.getpid(), database, path)
        self._arm_idle()
        try:
            await self._stopped
        finally:
            listener.close()
            for connection in list(self.connections):
                if connection._link is not None:
                    connection._link.close()
            self.service.close()
            log.info("contextls daemon %d stopped", os.getpid())


def hold_lock(path: Path) -> IO[str]:
    """Take the database's daemon lock for the life of the process, or raise AlreadyRunning."""
    handle = open(path.with_suffix(".lock"), "w")  # noqa: SIM115 (held until exit)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise AlreadyRunning(f"a contextls daemon already serves {path}") from None
    return handle


def run(storage: str | None, idle_timeout: float = DEFAULT_IDLE_TIMEOUT, log_file: str = "") -> int:
    """Serve until stopped (SIGTERM, idle); 0 also when another daemon already runs."""
    path = socket_path(storage)
    try:
        lock = hold_lock(path)
    except AlreadyRunning as running:
        log.info("%s", running)
        return 0
    with lock:
        # The lock is ours, so a socket file left here is from a daemon that died.
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        daemon = Daemon(storage, idle_timeout, log_file)
        try:
            asyncio.run(daemon.serve(path))
        finally:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    return 0
