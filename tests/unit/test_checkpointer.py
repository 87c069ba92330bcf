"""The WAL is copied into the database file on a thread of its own, never in a commit of
the connection that answers requests: commits go on while a checkpoint runs."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from contextls.storage.checkpointer import COMMITS_PER_CHECKPOINT
from contextls.storage.store import Store


def in_the_file(location: Path) -> int:
    """Rows of the notes in the database file itself, the WAL left unread."""
    probe = sqlite3.connect(location.absolute().as_uri() + "?immutable=1", uri=True)
    try:
        return int(probe.execute("SELECT count(*) FROM notes").fetchone()[0])
    finally:
        probe.close()


def add_notes(store: Store, first: int, count: int) -> None:
    for n in range(first, first + count):
        with store.write():
            store._db.execute("INSERT INTO notes VALUES (?, ?)", (n, f"note {n}" * 50))


def test_the_answering_connection_never_checkpoints_and_the_thread_does(tmp_path: Path) -> None:
    location = tmp_path / "context.sqlite3"
    store = Store(location)
    try:
        with store.write():
            store._db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the table in the file
        add_notes(store, 0, COMMITS_PER_CHECKPOINT - 10)
        assert in_the_file(location) == 0  # all of it in the WAL: no commit checkpointed
        checkpointer = store.checkpointer
        assert checkpointer is not None
        gate, running = threading.Event(), threading.Event()
        copy = checkpointer._checkpoint

        def held_back(connection: sqlite3.Connection) -> None:
            running.set()
            gate.wait()
            copy(connection)

        checkpointer._checkpoint = held_back  # type: ignore[method-assign]
        store.checkpoint()  # idle: asked, and answered at once
        assert running.wait(30)
        # While the thread is in its checkpoint, the answering connection commits on.
        add_notes(store, COMMITS_PER_CHECKPOINT - 10, 20)  # past the count: asks again
        assert checkpointer.done == 0
        gate.set()
        checkpointer.close()  # after the checkpoints asked for
        assert checkpointer.done >= 1 and checkpointer.failed is None
        assert in_the_file(location) >= COMMITS_PER_CHECKPOINT - 10
    finally:
        store.close()
    assert in_the_file(location) == COMMITS_PER_CHECKPOINT + 10  # closing copies the rest


def test_a_database_in_memory_has_no_checkpointer() -> None:
    store = Store(":memory:")
    assert store.checkpointer is None
    store.checkpoint()  # nothing to do, no error
    store.close()
