"""One semantic engine per database file: the model, two connections, per-root indexes.

The model loads (in its own process) from the worker's thread at the first idle turn, or
for the first search, which waits for it (in a thread of its own); status and serverInfo
answer without it. Without the extra, or with its model file missing or corrupt, the
engine is unavailable and says why; callers then fall back to keyword search.

Embedding runs on one worker thread, started from the server's idle turns and stopping
between items as soon as a request arrives (``go_on``): onnxruntime and SQLite release
the GIL, so the event loop keeps answering meanwhile. The worker writes on its own
connection; searches read on another.
"""

from __future__ import annotations

import atexit
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from contextls.search.meaning import Nearest
from contextls.semantic import (
    availability,
    backlog,
    indexer,
    nearby,
    tables,
    vector_index,
    vectors,
    window_queue,
)
from contextls.semantic.embedding_process import ProcessEmbedder
from contextls.semantic.indexer import now_ms
from contextls.semantic.model import MODEL_ID, Embedding, ModelError
from contextls.storage.errors import Busy, is_busy
from contextls.storage.transaction import write_transaction

if TYPE_CHECKING:
    from contextls.semantic.scan import Scanner

log = logging.getLogger(__name__)

CATCH_UP_SECONDS: Final = 0.25
"""A search first embeds what its root still has queued, for at most this long..."""
CATCH_UP_ITEMS: Final = 8
"""...when no more than this many wait (evicted items were mostly embedded in the window);
a bigger backlog (a bulk add) is the worker's, and the search says so at once."""
WORKER_BATCH: Final = 8

_engines: dict[str, Engine] = {}
_lock = threading.Lock()


def engine_for(location: str) -> Engine:
    with _lock:
        engine = _engines.get(location)
        if engine is None:
            engine = _engines[location] = Engine(location)
        return engine


@atexit.register
def _stop_workers() -> None:
    """A worker inside onnxruntime while the interpreter finalises aborts the process."""
    for engine in list(_engines.values()):
        engine.stop()


class Engine:
    def __init__(self, location: str) -> None:
        self.location = location
        self.model_id = MODEL_ID
        self._embedder: ProcessEmbedder | None = None
        self._scanner: Scanner | None = None
        self._reason: str | None = None
        """Why search by meaning cannot run in this process (None: it can, or may yet)."""
        self._checked: str | None = None
        """What the checks that load nothing found ("": nothing against it)."""
        self._busy = False
        """The vector tables wait for another transaction to end; the next call tries again."""
        self._read: sqlite3.Connection | None = None
        self._peek: sqlite3.Connection | None = None
        self._write: sqlite3.Connection | None = None
        self._inode = -1
        self._indexes: dict[str, vector_index.VectorIndex] = {}
        self.queries = nearby.QueryVectors()
        self._write_lock = threading.Lock()
        self._load_lock = threading.Lock()
        self._worker: threading.Thread | None = None
        self._caught_up = False
        self._stopping = False
        self._sweep_from = -1  # a sweep pass in progress: the rowid it reached
        self._swept = False
        self._windows_seen: dict[str, int] = {}
        """Each window's revision when the worker last looked at its items."""
        self._held = backlog.Held()
        self._counted = backlog.Remembered()
        self._looked_at = -1
        """``PRAGMA data_version`` when the worker last started: the file changed since?"""
        self.stored = 0
        """Items embedded by this process (for benches and tests)."""

    # ------------------------------------------------------------ availability

    def _ready(self) -> Embedding | None:
        if self._embedder is not None and self._read is not None:
            if self._inode != availability.file_inode(self.location):
                self._reopen()  # the file was replaced (rescued into a fresh database)
            return self._embedder
        if self._reason is not None:
            return None
        if self._embedder is None:
            self.load()
            if self._embedder is None:
                return None
        return self._open_when_free()  # loaded; its tables are made now, or at the next call

    def _open_when_free(self) -> Embedding | None:
        """Open the vector tables, or try again at the next call when another transaction
        holds the write lock (a window being seeded at ``initialize``): a busy database
        is a moment, not a reason to go without search by meaning for good."""
        try:
            self._open()
        except Busy:
            self._busy = True
            return None
        except sqlite3.Error as error:
            self._embedder = None
            self._reason = f"the vector table in {self.location} cannot be used: {error}"
            log.warning("semantic search unavailable: %s", self._reason)
            return None
        self._busy = False
        return self._embedder

    def _cheap_reason(self) -> str:
        """Why search by meaning cannot run here, found without loading the model."""
        if self._checked is None:
            self._checked = availability.why_not(self.location)
        return self._checked

    @property
    def unloaded(self) -> bool:
        return self._embedder is None and self._reason is None

    def load(self) -> None:
        """Load the model (~0.3 s), or say why it cannot run here: once, in whichever
        thread asks first (one asking meanwhile waits for it)."""
        with self._load_lock:
            if self._embedder is not None or self._reason is not None:
                return
            why = self._cheap_reason()
            if not why:
                try:
                    embedder = ProcessEmbedder(availability.model_path())
                    from contextls.semantic.scan import Scanner

                    self._scanner = Scanner(embedder.dimensions)
                    self._embedder = embedder  # last: other threads take it as loaded
                    return
                except ModelError as error:
                    why = str(error)
            self._reason = why
            log.warning("semantic search unavailable: %s", why)

    def _peek_connection(self) -> sqlite3.Connection:
        """A connection to read the counts before the model has loaded (opened once:
        opening one costs more than a status answer)."""
        if self._peek is None or self._inode != availability.file_inode(self.location):
            if self._peek is not None:
                self._peek.close()
            self._inode = availability.file_inode(self.location)
            self._peek = sqlite3.connect(
                self.location, isolation_level=None, check_same_thread=False
            )
        return self._peek

    def _open(self) -> None:
        assert self._embedder is not None
        self._inode = availability.file_inode(self.location)
        write = sqlite3.connect(self.location, isolation_level=None, check_same_thread=False)
        # The server checkpoints when idle, not this connection's commits; and on the
        # event loop, making the tables must not wait for another writer (sqlite3's 5 s).
        write.executescript("PRAGMA wal_autocheckpoint = 0; PRAGMA busy_timeout = 0")
        try:
            tables.install(write, self._embedder.model_id)
        except sqlite3.OperationalError as error:
            write.close()
            if is_busy(error):
                raise Busy(str(error)) from error
            raise
        write.execute("PRAGMA busy_timeout = 2000")  # the worker's: off the event loop
        read = sqlite3.connect(self.location, isolation_level=None, check_same_thread=False)
        read.execute("PRAGMA busy_timeout = 1000")
        read.execute("SELECT count(*) FROM semantic_vectors WHERE rowid = 0").fetchone()
        self._write, self._read = write, read
        if self._peek is not None:  # the read connection serves the counts from now on
            self._peek.close()
            self._peek = None

    def _reopen(self) -> None:
        with self._write_lock:
            for db in (self._read, self._write):
                if db is not None:
                    db.close()
            self._indexes.clear()
            self._caught_up = False
            self._windows_seen = {}
            self._open()

    @property
    def available(self) -> bool:
        return self._ready() is not None

    @property
    def reason(self) -> str:
        self._ready()
        if self._busy and self._reason is None:
            return "starting: the database is busy for a moment"
        return self._reason or ""

    def availability(self) -> dict[str, Any]:
        """Until the model has loaded, what the checks that load nothing found."""
        why = self._reason if self._reason is not None else self._cheap_reason()
        if why:
            return {"available": False, "model": MODEL_ID, "reason": why}
        return {"available": True, "model": self.model_id, "reason": ""}

    def status(self, root: str, archived: int) -> dict[str, Any]:
        """Availability, and the backlog of ``root`` whose archive holds ``archived`` items.
        Loads no model: a server started for one ``status`` answers without it, the counts
        read on a connection of their own until it has loaded."""
        found = self.availability()
        if not found["available"]:
            return found
        db = self._read or self._peek_connection()
        seen = self._windows_seen.get(root)
        return {**found, **self._counted.counts(db, root, archived, seen, self._held.of(root))}

    # --------------------------------------------------------------- indexing

    def index_some(self, idle: Callable[[], bool] = lambda: True) -> bool | None:
        """Embed in the background: None while the worker runs, False when nothing waits.
        ``idle`` says whether the server is still idle (the worker stops between items
        when it says no)."""
        if self._worker is not None and self._worker.is_alive():
            return None
        if self._embedder is None and not (self._reason or self._stopping or self._cheap_reason()):
            # On the worker's thread: requests that come meanwhile are answered at once.
            self._start_worker(self.load)
            return None
        embedder = self._ready()
        if embedder is None or self._write is None or self._stopping:
            return False
        db = self._read or self._write
        version = db.execute("PRAGMA data_version").fetchone()[0]
        # Nothing committed since the last look, no window item settled, no lease ran out.
        if self._caught_up and version == self._looked_at and not vectors.has_work(db, now_ms()):
            # Window items whose text may still change: look again after the next pause.
            return None if window_queue.window_waits(db) else False
        self._looked_at = version
        self._caught_up = False
        self._start_worker(self._work, embedder, lambda: not self._stopping and idle())
        return None

    def _start_worker(self, work: Callable[..., None], *args: Any) -> None:
        self._worker = threading.Thread(target=work, args=args, name="contextls-embed", daemon=True)
        self._worker.start()

    def _work(self, embedder: Embedding, idle: Callable[[], bool]) -> None:
        db = self._write
        assert db is not None
        may_sweep = True  # one pass a run: a pass that leaves the counts behind waits
        try:
            while idle():
                with self._write_lock:
                    self._windows_seen = indexer.look_at_windows(db, self._windows_seen)
                    done = indexer.index_some(db, embedder, WORKER_BATCH, go_on=idle)
                    self.stored += done
                    if done or vectors.archive_work(db, indexer.now_ms()):
                        continue  # the archive first: what is searched
                    if indexer.index_window(
                        db, embedder, WORKER_BATCH, go_on=idle, holding=self._held.hold
                    ):
                        continue
                    if not self._sweep(db, may_sweep):
                        self._caught_up = True
                        return
                    may_sweep = self._sweep_from >= 0
        except sqlite3.OperationalError as error:  # another process holds the write lock
            log.info("embedding waits: %s", error)
        except Exception:
            log.exception("embedding the archive failed; semantic search may miss items")
            self._caught_up = True  # do not spin on it; the next commit tries again

    def _sweep(self, db: sqlite3.Connection, may_start: bool) -> bool:
        """One step of deleting vectors of items that left the archive; True if more.

        A pass starts once per process (what a crash or an older file left behind),
        and whenever items left the archive (restored, pruned, merged).
        """
        if self._sweep_from < 0:
            vectors.drop_window_orphans(db)
            vectors.trim_gone(db)
            if not may_start or (self._swept and not vectors.swept_behind(db)):
                return False
            self._swept = True
            self._sweep_from = 0
        with write_transaction(db):
            last, _ = vectors.sweep(db, self._sweep_from)
        self._sweep_from = last if last else -1
        return True

    def forgotten(self) -> None:
        """Before a forget's scrub (its VACUUM), the vectors of forgotten items go, even if
        search by meaning cannot run here (another process's may be in the file). On a
        connection of its own, not waiting for the worker, which may be embedding a large
        item: what it embeds of one forgotten meanwhile is not kept (``vectors.store``)."""
        vectors.drop_unarchived_at(self.location)

    def stop(self) -> None:
        """No new work; wait for the item being embedded, then let the model's process go."""
        self._stopping = True
        self.wait(10.0)
        if self._embedder is not None:
            self._embedder.close()

    def wait(self, timeout: float = 30.0) -> None:
        """Until the worker stops (tests and benches)."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)

    # ---------------------------------------------------------------- search

    def catches_up(self, root: str, archived: int) -> bool:
        waiting = archived - vectors.indexed_count(self._read, root) if self._read else 0
        return 0 < waiting <= CATCH_UP_ITEMS

    def catch_up(self, root: str, archived: int, seconds: float = CATCH_UP_SECONDS) -> int:
        """Embed ``root``'s queue (``archived`` items) for at most ``seconds``; how many wait."""
        embedder = self._ready()
        if embedder is None or self._write is None or self._read is None:
            return 0
        waiting = max(archived - vectors.indexed_count(self._read, root), 0)
        if not waiting or waiting > CATCH_UP_ITEMS:
            return waiting
        deadline = time.monotonic() + seconds
        # The worker stops after the item it is embedding (a request came: not idle).
        if not self._write_lock.acquire(timeout=seconds):
            return waiting
        try:
            while time.monotonic() < deadline:
                done = indexer.index_some(
                    self._write,
                    embedder,
                    WORKER_BATCH,
                    root=root,
                    go_on=lambda: time.monotonic() < deadline,
                )
                self.stored += done
                if not done:
                    break
        except sqlite3.OperationalError as error:
            log.info("a search could not embed its backlog: %s", error)
        finally:
            self._write_lock.release()
        return max(archived - vectors.indexed_count(self._read, root), 0)

    def search(
        self, root: str, query: str, limit: int, kinds: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        return self.nearest(root, query, limit, kinds).hits

    def nearest(
        self,
        root: str,
        query: str,
        limit: int,
        kinds: Sequence[str] | None = None,
        asked: Sequence[str] = (),
    ) -> Nearest:
        embedder = self._ready()
        if embedder is None or self._read is None or self._scanner is None:
            return Nearest()
        index = self._indexes.setdefault(root, vector_index.VectorIndex(root, embedder.model_id))
        return nearby.nearest(
            self._read, self._scanner, index, embedder, self.queries, query, limit, kinds, asked
        )

    def embeds_query(self, query: str) -> bool:
        return self.queries.waits(self._embedder, query)

    def embed_query(self, query: str) -> None:
        self.queries.make(self._embedder, query)

    def index_bytes(self) -> int:
        return sum(index.nbytes for index in self._indexes.values())
