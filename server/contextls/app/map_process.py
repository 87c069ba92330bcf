"""The daemon's end of the maps' own process (``map_ranker``): started by the first map,
one per daemon, sent each map's request, and its answers given to those who wait.

If the process dies, the maps it was making are answered with an error naming it, and
the next map starts it again; it ends by itself after ``IDLE_SECONDS`` without a request
(it holds the facts of every file it mapped), and with the daemon.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import logging
import multiprocessing
import threading
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, Final

from contextls.app.code_index import Progress
from contextls.app.map_main import serve
from contextls.app.map_messages import (
    ANSWERED,
    CANCEL,
    FAILED,
    FIND,
    PREPARE,
    PROGRESS,
    RANK,
    STOP,
    FindRequest,
    Found,
    MapRequest,
    Preparation,
    Prepared,
    Ranking,
    Version,
)
from contextls.core.errors import ContextError
from contextls.core.items import Item
from contextls.protocol import ErrorCode

log = logging.getLogger(__name__)

STOP_SECONDS: Final = 2.0
"""How long a stopping daemon waits for the map's process to end before killing it."""
IDLE_SECONDS: Final = 600.0
"""The map's process ends after this long without a request (a live map asks every few
seconds, so it stays while any window holds one); the next map starts it again."""
PREPARED_SECONDS: Final = 120.0
"""The same for a process asked only to prepare maps: what it holds (up to ~550 MB at
``code_index.MAPPED_MB``) is let go sooner when nobody asks for a map; the facts cache
keeps what it parsed, so a map asked later reads rather than parses."""


class MapProcess:
    """The daemon's end of the map's process: starts it when first asked, sends it
    requests, and answers each from what comes back."""

    def __init__(
        self, idle_seconds: float = IDLE_SECONDS, prepared_seconds: float = PREPARED_SECONDS
    ) -> None:
        self._connection: Connection | None = None
        self._process: BaseProcess | None = None
        self._waiting: dict[int, tuple[asyncio.Future[Any], Progress | None]] = {}
        self._ids = itertools.count(1)
        self._at_exit = False
        self._idle_check: asyncio.TimerHandle | None = None
        self._last_asked = 0.0
        self.idle_seconds = idle_seconds
        self.prepared_seconds = prepared_seconds
        self._mapped = False
        """A map or a name was asked of the running process (not only preparations)."""
        self.starts = 0
        """How often the process was started (again after it died)."""

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None and process.is_alive() else None

    async def rank(
        self,
        request: MapRequest,
        known: Version | None,
        shape: Item,
        progress: Progress | None = None,
    ) -> Ranking:
        """The map ``request`` asks for, fitted as the item ``shape`` with its text;
        ``known``: the version of the map the daemon holds for the same request
        (unchanged is answered when the files are the same)."""
        ranking: Ranking = await self._ask((RANK, request, known, shape), progress)
        return ranking

    async def find(self, request: FindRequest) -> Found:
        """Where the definitions a name means are, in every file of the workspace."""
        found: Found = await self._ask((FIND, request), None)
        return found

    async def prepare(self, preparation: Preparation) -> Prepared:
        """Make a workspace's map ready before it is asked for (its files parsed, their
        graph made, the tokenizer loaded); a map asked meanwhile waits for it."""
        prepared: Prepared = await self._ask((PREPARE, preparation), None)
        return prepared

    async def _ask(self, message: tuple[Any, ...], progress: Progress | None) -> Any:
        loop = asyncio.get_running_loop()
        connection = self._running(loop)
        self._mapped |= message[0] != PREPARE
        ident = next(self._ids)
        future: asyncio.Future[Any] = loop.create_future()
        self._waiting[ident] = (future, progress)
        try:
            connection.send((message[0], ident, *message[1:]))
            return await future
        except asyncio.CancelledError:
            self._tell((CANCEL, ident))
            raise
        except OSError as error:
            raise self._stopped(f"it could not be reached ({error})") from None
        finally:
            self._waiting.pop(ident, None)
            self._last_asked = loop.time()
            if self._idle_check is None:
                self._idle_check = loop.call_later(self._idle_limit(), self._end_if_idle, loop)

    def _idle_limit(self) -> float:
        return self.idle_seconds if self._mapped else min(self.idle_seconds, self.prepared_seconds)

    def _end_if_idle(self, loop: asyncio.AbstractEventLoop) -> None:
        self._idle_check = None
        if self._process is None:
            return
        left = self._last_asked + self._idle_limit() - loop.time()
        if self._waiting or left > 0:
            self._idle_check = loop.call_later(max(left, 0.1), self._end_if_idle, loop)
            return
        log.info("the map's process ends: no map asked for %.0f s", self._idle_limit())
        # Its exit frees what it holds (hundreds of MB): waited for off the loop.
        ended = self._detach("it was idle")
        threading.Thread(target=_stop, args=ended, name="map process end").start()

    def _tell(self, message: tuple[Any, ...]) -> None:
        connection = self._connection
        if connection is not None:
            with contextlib.suppress(OSError):
                connection.send(message)

    def _running(self, loop: asyncio.AbstractEventLoop) -> Connection:
        process, connection = self._process, self._connection
        if process is not None and connection is not None and process.is_alive():
            return connection
        _stop(*self._detach("it ended"))  # its waiters are told (its end may not be read yet)
        # spawn: the daemon has threads (the embedding worker); fork would copy their
        # locks mid-use. Not a daemonic process: it starts the parsing workers itself.
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        process = context.Process(target=serve, args=(theirs,), name="contextls-map")
        process.start()
        theirs.close()
        self._process, self._connection = process, ours
        self._mapped = False
        self.starts += 1
        if not self._at_exit:
            # Before multiprocessing's own exit hook, which would wait for it forever.
            atexit.register(self.close)
            self._at_exit = True
        reader = threading.Thread(
            target=self._read, args=(ours, loop), name="map answers", daemon=True
        )
        reader.start()
        return ours

    def _read(self, connection: Connection, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            try:
                message = connection.recv()
            except (EOFError, OSError):
                message = None
            try:
                loop.call_soon_threadsafe(self._arrived, connection, message)
            except RuntimeError:
                return  # the loop is closed: the daemon is stopping
            if message is None:
                return

    def _arrived(self, connection: Connection, message: tuple[Any, ...] | None) -> None:
        if message is None:
            self._ended(connection)
            return
        kind, ident = message[0], message[1]
        waiting = self._waiting.get(ident)
        if waiting is None:
            return  # cancelled: nobody waits for it
        future, progress = waiting
        if kind == PROGRESS:
            if progress is not None:
                progress(message[2], message[3])
        elif future.done():
            return
        elif kind == ANSWERED:
            future.set_result(message[2])
        elif kind == FAILED:
            future.set_exception(ContextError(message[2], ErrorCode(message[3])))

    def _ended(self, connection: Connection) -> None:
        if connection is not self._connection:
            return  # an earlier process's end, already closed
        process = self._process
        self._connection = self._process = None
        code = None
        if process is not None:
            process.join(STOP_SECONDS)
            code = process.exitcode
        connection.close()
        why = self._stopped(f"it ended with exit code {code}")
        log.warning("the map's process ended (exit code %s)", code)
        for future, _ in list(self._waiting.values()):
            if not future.done():
                future.set_exception(why)

    @staticmethod
    def _stopped(why: str) -> ContextError:
        return ContextError(
            f"the map's process stopped while it read the workspace's code: {why}; asking "
            "again starts it anew",
            ErrorCode.NO_STRUCTURE,
        )

    def close(self) -> None:
        """Stop the process (it stops its parsing workers), killing it if it lingers."""
        _stop(*self._detach("it was stopped"))

    def _detach(self, why: str) -> tuple[Connection | None, BaseProcess | None]:
        """Forget the process, telling what waits for it ``why`` (nothing else would answer
        them: a process that died may be replaced before its end is read)."""
        connection, process = self._connection, self._process
        self._connection = self._process = None
        stopped = self._stopped(why)
        for future, _ in list(self._waiting.values()):
            with contextlib.suppress(RuntimeError):  # its loop closed: the daemon ends
                if not future.done():
                    future.set_exception(stopped)
        return connection, process


def _stop(connection: Connection | None, process: BaseProcess | None) -> None:
    if connection is not None:
        with contextlib.suppress(OSError):
            connection.send((STOP,))
        connection.close()
    if process is not None:
        process.join(STOP_SECONDS)
        if process.is_alive():
            process.kill()
            process.join(STOP_SECONDS)
