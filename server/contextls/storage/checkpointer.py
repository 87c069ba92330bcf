"""Copying the WAL into the database file on a thread and a connection of its own.

A checkpoint writes the WAL's pages into the database file and syncs it. Quiet, that
takes a few milliseconds; while another program writes and syncs a lot (a build, a
copy), one took 107 ms here, and SQLite's own checkpoint runs inside the commit that
crosses its limit: on the thread that answers every client. WAL lets a checkpoint run
beside writers and readers of other connections, and Python's ``sqlite3`` lets go of
the GIL while SQLite works, so here a thread does it.

The thread copies when the server is idle and every ``COMMITS_PER_CHECKPOINT``
commits. What stays on the answering thread: after a checkpoint that copied the whole
WAL, the next commit starts the WAL again from its beginning and SQLite syncs the WAL's
new header there (strace: up to ~100 ms under the same load), and the commit that finds
the WAL past ``WAL_CHECKPOINT_PAGES`` (a stream of requests that never pauses) copies
what the thread had not.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

log = logging.getLogger(__name__)

COMMITS_PER_CHECKPOINT: Final = 256
"""A checkpoint runs after this many commits even if the server is never idle, so the
thread copies while a stream of requests goes on."""
BUSY_TIMEOUT_MS: Final = 5000


class Checkpointer:
    """A thread that checkpoints ``location``'s WAL (``PASSIVE``: waiting for nobody)
    when asked (``request``) and as commits add up (``committed``). Started at its
    first checkpoint; ``close`` stops it."""

    def __init__(self, location: str) -> None:
        self.location = location
        self.done = 0
        """Checkpoints run (each copied what the WAL held that no reader still needs)."""
        self.failed: str | None = None
        """Why the last checkpoint failed, if it did (the next request tries again)."""
        self._commits = 0
        self._wanted = threading.Event()
        self._stopping = False
        self._running = threading.Lock()
        """Held while a checkpoint runs: a checkpoint that must truncate waits for it."""
        self._thread: threading.Thread | None = None

    def committed(self) -> None:
        """Count a commit; every ``COMMITS_PER_CHECKPOINT``th starts a checkpoint."""
        self._commits += 1
        if self._commits >= COMMITS_PER_CHECKPOINT:
            self.request()

    def request(self) -> None:
        """Start a checkpoint on the thread; this returns at once."""
        self._commits = 0
        if self._stopping:
            return
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._serve, name=f"checkpoint {self.location}", daemon=True
            )
            self._thread.start()
        self._wanted.set()

    @contextmanager
    def held(self) -> Iterator[None]:
        """No checkpoint of this thread runs meanwhile: one that must truncate the WAL
        would be refused (SQLite runs one checkpoint at a time) while this one runs."""
        with self._running:
            yield

    def close(self) -> None:
        """Stop the thread after the checkpoint it may be running."""
        self._stopping = True
        self._wanted.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _serve(self) -> None:
        connection: sqlite3.Connection | None = None
        try:
            while True:
                self._wanted.wait()
                self._wanted.clear()
                if self._stopping:
                    return
                if connection is None:
                    connection = sqlite3.connect(
                        self.location, isolation_level=None, check_same_thread=False
                    )
                    connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                with self._running:
                    self._checkpoint(connection)
        except Exception as error:  # the writers' own connections are not touched
            self.failed = str(error)
            log.exception("the checkpoint thread of %s stopped", self.location)
        finally:
            if connection is not None:
                connection.close()

    def _checkpoint(self, connection: sqlite3.Connection) -> None:
        try:
            connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error as error:  # a full disk, another process's checkpoint
            self.failed = str(error)
            log.info("checkpointing %s waits: %s", self.location, error)
            return
        self.failed = None
        self.done += 1
