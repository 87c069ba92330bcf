"""The one way a SQLite connection of contextls writes: a transaction that takes the write
lock at once, committed whole or rolled back whole, and savepoints inside it.

SQLite rolls a whole transaction back by itself on some errors (a full disk, an I/O
error, an interrupt), savepoints included. Undoing then must not run ``ROLLBACK`` or
``ROLLBACK TO``, which would fail ("no transaction is active", "no such savepoint") and
hide the error that matters; the caller hears the original error and can see, from
``in_transaction``, that everything before it in the transaction is gone too (as
sqlite-utils' ``atomic()`` does).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

DISK_FULL: Final = frozenset({"SQLITE_FULL"})
"""``sqlite_errorname`` of a change that found no room on the disk (or past
``max_page_count``)."""


def is_disk_full(error: BaseException) -> bool:
    """Whether SQLite refused for lack of room, told by its error code, not its text."""
    return getattr(error, "sqlite_errorname", None) in DISK_FULL


@contextmanager
def write_transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` (another writer is waited for, up to the busy timeout, before
    anything is read), then ``COMMIT`` at the end of the block, or ``ROLLBACK`` if it
    raises. ``db`` must be in autocommit mode (``isolation_level=None``)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if db.in_transaction:  # else SQLite rolled it back already
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


@contextmanager
def savepoint(db: sqlite3.Connection, name: str = "change") -> Iterator[None]:
    """Part of the open transaction that is undone alone if it fails half-way.

    When SQLite rolled the whole transaction back, the error is raised as it is and
    ``db.in_transaction`` is False: what the transaction held before is gone too."""
    db.execute(f"SAVEPOINT {name}")
    try:
        yield
    except BaseException:
        if db.in_transaction:
            db.execute(f"ROLLBACK TO {name}")
            db.execute(f"RELEASE {name}")
        raise
    db.execute(f"RELEASE {name}")
