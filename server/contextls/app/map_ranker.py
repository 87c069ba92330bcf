"""The map's own process: it parses the workspace, keeps what each file defines and the
graph of their uses, ranks them, and fits the best to the share in the window's tokens.

Ranking a repository is pure Python over every file's facts (CPython's ``Lib/``: 1,790
files, ~150,000 objects). In the daemon it took the GIL in turns with every other
client's request (another client's ``addText`` 13-31x its idle time while a map was
made or ranked again, and every two seconds after while the map stayed live), and the
facts stayed in the daemon's memory. Here it has an interpreter of its own: the daemon
(``map_process.MapProcess``) sends a small request (the window's focus, the share, the
tokenizer's name) and reads the map's text; the facts never cross.

The process holds a code index per workspace (by its root, the last few mapped) with its
own worker processes for the parsing. The maps of one workspace are ranked one at a
time, in a thread, so that a cancel, or another workspace's request, is read meanwhile.
It also finds a definition by its name anywhere in a workspace (``FindRequest``): the
same parse, and what it parsed serves the next map. And it prepares a workspace's map
before anyone asks (``Preparation``: the daemon sends it as a folder of a git
repository opens): its files parsed, the graph of their uses made and the
tokenizer loaded, so the first map is a ranking; a map asked meanwhile waits for the
preparation, hearing its progress.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Final, TypeVar

from contextls.app import code_index, collector
from contextls.app.code_index import CodeIndex, Progress
from contextls.app.expand import git_lists
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
from contextls.app.map_text import fitted, ranked, unmapped_note, unread_note
from contextls.app.sources import Sources
from contextls.app.tokenizers import tokenizer
from contextls.app.workers import Workers
from contextls.core.costs import Costs
from contextls.core.errors import ContextError
from contextls.core.items import Item
from contextls.protocol import ErrorCode
from contextls.structure.model import Symbol
from contextls.structure.resolve import near, resolve
from contextls.structure.uses import uses

log = logging.getLogger(__name__)
T = TypeVar("T")

KEPT_WORKSPACES: Final = 4
"""Workspaces whose code the map's process keeps, together at most the code a map holds
(``code_index.mapped_megabytes``); the least recently mapped goes first (what was parsed
stays in the facts cache on disk: its next map reads, not parses)."""


def serve(connection: Connection, workers: Workers) -> None:
    """Answer the daemon's requests until it goes away (``map_main`` starts it)."""
    asyncio.run(_Ranker(connection, workers).run())


class _Ranker:
    def __init__(self, connection: Connection, workers: Workers) -> None:
        self.connection = connection
        self.workers = workers
        self.indexes: dict[str, CodeIndex] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.costs: dict[str, Costs] = {}
        """What an item takes, by tokenizer (each loaded on its first map)."""
        self.users: dict[str, int] = {}
        """Requests holding or waiting for each workspace's lock: it is not let go then."""
        self.preparing = asyncio.Lock()
        """Preparations run one at a time (nobody waits for them)."""
        self.listeners: dict[str, set[Progress]] = {}
        """Who hears the progress of a workspace's parse, whoever started it: a map
        asked while the workspace is prepared hears the preparation's."""

    def _costs(self, encoding: str) -> Costs:
        costs = self.costs.get(encoding)
        if costs is None:
            counter = tokenizer(encoding)
            costs = self.costs[encoding] = Costs(counter.count, encoding)
            costs.seam()  # counted now: the tokenizer loads here, not in the ranking
        return costs

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        messages: asyncio.Queue[tuple[Any, ...] | None] = asyncio.Queue()

        def read() -> None:
            while True:
                try:
                    message: tuple[Any, ...] | None = self.connection.recv()
                except (EOFError, OSError):
                    message = None  # the daemon went away
                loop.call_soon_threadsafe(messages.put_nowait, message)
                if message is None or message[0] == STOP:
                    return

        threading.Thread(target=read, name="map requests", daemon=True).start()
        try:
            while (message := await messages.get()) is not None and message[0] != STOP:
                work: Awaitable[Ranking | Found | Prepared]
                if message[0] == RANK:
                    _, ident, request, known, shape = message
                    work = self._rank(ident, request, known, shape)
                    self.tasks[ident] = asyncio.ensure_future(self._answer(ident, work))
                elif message[0] == FIND:
                    _, ident, asked = message
                    work = self._find(ident, asked)
                    self.tasks[ident] = asyncio.ensure_future(self._answer(ident, work))
                elif message[0] == PREPARE:
                    _, ident, preparation = message
                    work = self._prepare(preparation)
                    self.tasks[ident] = asyncio.ensure_future(self._answer(ident, work))
                elif message[0] == CANCEL and message[1] in self.tasks:
                    self.tasks[message[1]].cancel()
        finally:
            for task in self.tasks.values():
                task.cancel()
            self.workers.close()

    def _send(self, message: tuple[Any, ...]) -> None:
        # The daemon may have gone away: then the reader ends the loop.
        with contextlib.suppress(OSError):
            self.connection.send(message)

    async def _answer(self, ident: int, work: Awaitable[Ranking | Found | Prepared]) -> None:
        try:
            # No cyclic collection until the answer is sent: each collection of the
            # oldest generation walks every file's facts again (a third of a re-rank),
            # and the one due once the collector resumes after a first map (0.14 s over
            # CPython's Lib/) then runs when nobody waits.
            with collector.paused():
                self._send((ANSWERED, ident, await work))
        except asyncio.CancelledError:
            pass  # the daemon no longer waits for it
        except ContextError as error:
            self._send((FAILED, ident, error.message, int(error.code)))
        except Exception as error:
            log.exception("a request of the maps' process failed")
            said = f"the workspace's code could not be read: {type(error).__name__}: {error}"
            self._send((FAILED, ident, said, int(ErrorCode.NO_STRUCTURE)))
        finally:
            self.tasks.pop(ident, None)

    def _index(self, root: str, recent: bool = True) -> CodeIndex:
        """The code index of the workspace at ``root``, now the most recently used (else,
        ``recent`` false, the least: the first to go)."""
        index = self.indexes.pop(root, None)
        if index is None:
            index = CodeIndex(Sources(Path(root), lambda uri: None))  # disk only
        if recent:
            self.indexes[root] = index
        else:
            self.indexes = {root: index, **self.indexes}
        for other in list(self.indexes)[:-KEPT_WORKSPACES]:
            self._let_go(other)
        self.locks.setdefault(root, asyncio.Lock())
        return index

    @contextlib.asynccontextmanager
    async def _holding(self, root: str) -> AsyncIterator[None]:
        """The workspace's lock, held; it is not let go while anyone holds or awaits it."""
        self.users[root] = self.users.get(root, 0) + 1
        try:
            async with self.locks[root]:
                yield
        finally:
            self.users[root] -= 1
            if not self.users[root]:
                del self.users[root]

    def _within_bytes(self) -> None:
        """Let the least recently mapped workspaces go while all hold more code than a map
        may (the most recent stays: its gather kept within it)."""
        held = {root: index.code_bytes() for root, index in self.indexes.items()}
        for root in list(self.indexes)[:-1]:
            if sum(held.values()) <= code_index.mapped_megabytes() * 2**20:
                return
            if self._let_go(root):
                del held[root]

    def _let_go(self, root: str) -> bool:
        if root in self.users:
            return False  # a ranking of it runs or waits: it goes after
        del self.indexes[root], self.locks[root]
        return True

    @contextlib.contextmanager
    def _hearing(self, root: str, progress: Progress | None) -> Iterator[None]:
        """``progress`` hears every parse of ``root`` while inside."""
        if progress is None:
            yield
            return
        listeners = self.listeners.setdefault(root, set())
        listeners.add(progress)
        try:
            yield
        finally:
            listeners.discard(progress)

    def _told(self, root: str) -> Progress:
        def tell(done: int, total: int) -> None:
            for listener in list(self.listeners.get(root, ())):
                listener(done, total)

        return tell

    async def _prepare(self, preparation: Preparation) -> Prepared:
        """Parse a workspace and make its graph, for a map not asked yet: one preparation
        at a time, never in place of a workspace held already (the process holds its
        most: a map asked will parse), and only what git lists (a folder whose listing
        would be a walk of everything in it is not mapped ahead)."""
        root = preparation.root
        async with self.preparing:
            if root in self.indexes:
                return Prepared(0, 0, self.indexes[root].unmapped, already=True)
            held = sum(index.code_bytes() for index in self.indexes.values())
            if (
                len(self.indexes) >= KEPT_WORKSPACES
                or held >= code_index.mapped_megabytes() * 2**20
            ):
                return Prepared(0, 0, 0, skipped="the maps' process holds all it may")
            if not await asyncio.to_thread(git_lists, Path(root)):
                return Prepared(0, 0, 0, skipped="git does not list its files")
            if root in self.indexes:  # a map of it was asked meanwhile
                return Prepared(0, 0, self.indexes[root].unmapped, already=True)
            # The least recent: over the code a map holds, it goes before any workspace a
            # map was asked of.
            index = self._index(root, recent=False)
            async with self._holding(root):
                loading = _Loading(self._costs, preparation.encoding)
                try:
                    told = loading.once_parsing(self._told(root))
                    files = await index.gather(self.workers, preparation.max_bytes, told)
                    await _unbroken(asyncio.to_thread(uses, files, index.uses))
                finally:
                    await loading.settled()
                await loading.loaded()
                prepared = Prepared(  # a new index: all it parsed is this preparation's
                    len(files), index.parsed, index.unmapped, unread=len(index.unread)
                )
            self._within_bytes()
            return prepared

    async def _find(self, ident: int, asked: FindRequest) -> Found:
        index = self._index(asked.root)
        async with self._holding(asked.root):
            files = await index.gather(self.workers, asked.max_bytes, self._told(asked.root))
            unmapped = index.unmapped
        self._within_bytes()
        hits: list[tuple[str, Symbol]] = []
        close: list[str] = []
        for rel, facts in files.items():
            found = resolve(facts.symbols, asked.name)
            if found:
                hits += [(rel, symbol) for symbol in found]
            elif len(close) < 5:
                close += [f"{rel}::{name}" for name in near(facts.symbols, asked.name, 2)]
        return Found(hits, close[:5], unmapped)

    async def _rank(
        self, ident: int, request: MapRequest, known: Version | None, shape: Item
    ) -> Ranking:
        index = self._index(request.root)

        def progress(done: int, total: int) -> None:
            self._send((PROGRESS, ident, done, total))

        with self._hearing(request.root, progress):
            async with self._holding(request.root):
                return await self._rank_held(index, request, known, shape)

    async def _rank_held(
        self, index: CodeIndex, request: MapRequest, known: Version | None, shape: Item
    ) -> Ranking:
        loading = _Loading(self._costs, request.encoding)
        try:
            told = loading.once_parsing(self._told(request.root))
            files = await index.gather(self.workers, request.max_bytes, told)
        finally:
            await loading.settled()
        costs = await loading.loaded()
        self._within_bytes()
        version = (os.getpid(), index.version)
        if version == known:
            return Ranking("", 0, version, unchanged=True)

        unmapped = index.unmapped
        tail = unmapped_note(unmapped, len(files)) + unread_note(index.unread)

        def make() -> Ranking:
            entries = ranked(files, request, index.uses)
            text, shown_count = fitted(entries, costs, shape, request.share, tail)
            return Ranking(text, shown_count, version, unmapped=unmapped)

        return await _unbroken(asyncio.to_thread(make))


class _Loading:
    """The window's tokenizer, loaded in a thread from the first batch parsed: its first
    load (~0.2 s, mostly holding the GIL) slowed the listing the workers wait for."""

    def __init__(self, load: Callable[[str], Costs], encoding: str) -> None:
        self.load, self.encoding = load, encoding
        self.future: asyncio.Future[Costs] | None = None

    def once_parsing(self, progress: Progress) -> Progress:
        def told(done: int, total: int) -> None:
            self.loaded()
            progress(done, total)

        return told

    def loaded(self) -> asyncio.Future[Costs]:
        if self.future is None:
            self.future = asyncio.ensure_future(asyncio.to_thread(self.load, self.encoding))
        return self.future

    async def settled(self) -> None:  # if it started: a failed parse does not start it
        if self.future is not None:
            await self.future


async def _unbroken(work: Awaitable[T]) -> T:
    """``work`` (a thread updating a workspace's uses) awaited to its end even when the
    request is cancelled: the thread runs on, and the next request for the workspace
    waits for it (the cancelled one holds the workspace's lock until then)."""
    running = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        await asyncio.wait([running])
        raise
