"""The one way a plain SQLite connection writes: a transaction that takes the write lock
at once, committed whole or rolled back whole."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def write_transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` (another writer is waited for, up to the busy timeout, before
    anything is read), then ``COMMIT`` at the end of the block, or ``ROLLBACK`` if it
    raises. ``db`` must be in autocommit mode (``isolation_level=None``)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
