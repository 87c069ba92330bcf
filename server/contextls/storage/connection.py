"""The SQLite connection under the store: opening, transactions, and watching the file.

One database holds every workspace (keyed by root URI). WAL mode lets an Emacs
and a VS Code server share it: each holds the write lock (``BEGIN IMMEDIATE``)
while it works, and catches up with the other's commits when it takes it.

Durability: with WAL and ``synchronous=NORMAL`` (the default) a committed
transaction survives the process being killed; a power loss may take the last
commits. ``synchronous=FULL`` (setting ``durability: "full"``) syncs the WAL at
every commit, so commits survive power loss too, at ~0.2 ms more each.

A database the process may not write (a read-only file or file system) is opened
read only: reads work, changes are refused with a message. A file that is not a
database is moved aside and a fresh one is made in its place.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from contextls.common.places import default_database, keep_private, private_file
from contextls.storage import held_files, migrations
from contextls.storage.checkpointer import Checkpointer
from contextls.storage.errors import DevelopmentFile, NewerSchema, StorageError, is_read_only
from contextls.storage.reserve import Reserve
from contextls.storage.schema import CORE
from contextls.storage.soundness import corruption_of, header_problem, integrity_problem
from contextls.storage.transaction import savepoint

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS: Final = 5000
MEMORY: Final = ":memory:"
SYNCHRONOUS: Final = {"normal": "NORMAL", "full": "FULL"}
PAGE_SIZE: Final = 1024
WAL_CHECKPOINT_PAGES: Final = 16_384
"""A commit of the answering connection checkpoints the WAL itself only past this many
pages (16 MiB at 1 KiB): the checkpointer's thread copies it (``checkpoint``). The WAL
starts again from its beginning only after a copy no commit landed during, so under a
stream of requests that never pauses this is what bounds the file; by then the thread
has copied all but the last pages."""


def move_aside(location: Path, tag: str) -> Path:
    """Rename a database file and its WAL and shared-memory files to
    ``NAME.TAG-YYYYmmdd-HHMMSS``, so a fresh one can take its place; returns where."""
    target = location.with_name(f"{location.name}.{tag}-{time.strftime('%Y%m%d-%H%M%S')}")
    for suffix in ("", "-wal", "-shm"):
        side = location.with_name(location.name + suffix)
        if side.exists():
            side.replace(target.with_name(target.name + suffix))
    return target


class Database:
    """The connection, its transactions, and what the file went through."""

    def __init__(self, location: str | Path | None = None, synchronous: str = "normal") -> None:
        self.location = str(location) if location is not None else str(default_database())
        self.synchronous = SYNCHRONOUS[synchronous]
        self.moved_aside: Path | None = None
        """Where a database this build cannot use was moved, so the server can tell the user."""
        self.moved_why = ""
        """Why it was moved ("was corrupt", "was written by a development build ...")."""
        self.read_only: str | None = None
        """Why changes cannot be saved (the file or its file system is read-only), or None."""
        self.tightened: list[str] = []
        """Files that others could read, made private at open (for the person to hear)."""
        self._data_version = 0
        self.needs_scrub = False
        """A commit forgot items: ``scrub`` must run after it."""
        self.lost: BaseException | None = None
        """The error with which SQLite rolled back the open transaction by itself."""
        self._file_signature: tuple[int, int, int] | None = None
        self._db = self._open()
        self.checkpointer: Checkpointer | None = None
        """Copies the WAL into the file on a thread of its own (none for a database in
        memory or one this process may only read)."""
        if self.location != MEMORY and self.read_only is None:
            self.checkpointer = Checkpointer(self.location)
        self.reserve = Reserve(self.location)
        """Room for a forget on a full disk (none in memory or for a read-only file)."""
        if self.location != MEMORY:
            held_files.opened(self.location)
            if self.read_only is None:
                self.reserve.keep()
        self._file_signature = self._signature() if self.location != MEMORY else None

    # ---------------------------------------------------------------- opening

    def _open(self) -> sqlite3.Connection:
        if self.location != MEMORY:
            self._make_private()
        try:
            return self._connect()
        except NewerSchema:
            raise
        except DevelopmentFile as error:  # nothing of it is lost: it is kept beside
            return self._connect_fresh("unreadable", str(error))
        except sqlite3.OperationalError as error:
            if is_read_only(error) and Path(self.location).exists():
                return self._connect_read_only(error)
            raise StorageError(f"cannot open {self.location}: {error}") from error
        except sqlite3.DatabaseError as error:
            if self.location == MEMORY:
                raise StorageError(f"cannot open {self.location}: {error}") from error
            # Moving a file aside is a last resort: only for a file SQLite itself, asked
            # again on a connection of its own, finds is not a sound database.
            proof = corruption_of(self.location)
            if proof is None:
                raise StorageError(
                    f"cannot open {self.location}: {error} (SQLite's own check finds the file "
                    "sound, so it is left as it is; try again)"
                ) from error
            return self._connect_fresh("corrupt", f"was corrupt ({proof})")

    def _connect_fresh(self, tag: str, why: str) -> sqlite3.Connection:
        """Move the file aside as ``NAME.TAG-…`` (why: what was wrong with it) and start
        an empty one."""
        self.moved_aside = move_aside(Path(self.location), tag)
        self.moved_why = why
        log.warning("%s %s; moved to %s", self.location, why, self.moved_aside)
        private_file(Path(self.location))
        return self._connect()

    def _make_private(self) -> None:
        """The database and its journal files are the user's alone (0600), and so is the
        state folder when it is the default one (a folder the person chose, maybe their
        project, keeps its mode). What had to be tightened is said in ``tightened``."""
        location = Path(self.location)
        default = location == default_database()
        try:
            location.parent.mkdir(mode=0o700 if default else 0o777, parents=True, exist_ok=True)
            private_file(location)
        except OSError as error:
            if not location.exists():
                raise StorageError(f"cannot create {self.location}: {error}") from error
        places = [location, *(Path(f"{location}{suffix}") for suffix in ("-wal", "-shm"))]
        if default:
            places.insert(0, location.parent)
        for path in places:
            said = keep_private(path, 0o700 if path.is_dir() else 0o600)
            if said:
                self.tightened.append(said)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.location, isolation_level=None, check_same_thread=False)
        try:
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if migrations.is_new(db):
                # Small pages for a new database: every change is committed on its own
                # before its answer, and a commit writes each page it touched to the
                # WAL. Measured here on an add that evicts: 57 µs a commit with 4 KiB
                # pages, 36 µs with 1 KiB. (Set before the first write, or ignored.)
                db.execute(f"PRAGMA page_size = {PAGE_SIZE}")
                # Pages freed by pruning and forgetting go back to the file system
                # (``incremental_vacuum``) instead of staying in the file for good.
                db.execute("PRAGMA auto_vacuum = INCREMENTAL")
            if self.location != MEMORY:
                db.execute("PRAGMA journal_mode = WAL")
                db.execute(f"PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}")
            db.execute(f"PRAGMA synchronous = {self.synchronous}")
            migrations.upgrade(db, CORE, self.location)
            db.execute("SELECT count(*) FROM workspaces").fetchone()
        except BaseException:
            db.close()
            raise
        return db

    def _connect_read_only(self, why: sqlite3.OperationalError) -> sqlite3.Connection:
        base = Path(self.location).resolve().as_uri()
        try:
            try:
                db = sqlite3.connect(
                    base + "?mode=ro", uri=True, isolation_level=None, check_same_thread=False
                )
                waiting = migrations.pending(db, CORE, self.location)
            except sqlite3.OperationalError:
                # A WAL database on a read-only file system without its -shm file:
                # nobody can change it there, so SQLite may read it as immutable.
                db = sqlite3.connect(
                    base + "?immutable=1", uri=True, isolation_level=None, check_same_thread=False
                )
                waiting = migrations.pending(db, CORE, self.location)
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if waiting:
                db.close()
                raise StorageError(
                    f"{self.location} is read-only and needs an upgrade "
                    f"({', '.join(step.name for step in waiting)}); make it writable once"
                )
            db.execute("SELECT count(*) FROM workspaces").fetchone()
        except NewerSchema:
            raise
        except sqlite3.DatabaseError as error:
            raise StorageError(f"cannot open {self.location}: {error}") from error
        self.read_only = f"{self.location} is read-only ({why})"
        log.warning("%s; serving it read-only", self.read_only)
        return db

    def close(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.close()
        self._db.close()
        held_files.closed(self.location)

    # --------------------------------------------------------------- watching

    def changed_elsewhere(self) -> bool:
        """True once after another connection committed (``PRAGMA data_version``)."""
        version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
        changed = version != self._data_version
        self._data_version = version
        return changed

    def damaged(self, deep: bool = False) -> str | None:
        """Why the file under this connection is no longer this database, or None.

        SQLite writes the main file only when it checkpoints the WAL, and
        another contextls never changes its header, so a header that is no
        longer SQLite's (garbage written over the file, a truncation) means
        what we commit from now on would be lost. Cheap: a stat, and the header
        read again only when the stat changed. ``deep`` also runs SQLite's
        ``quick_check`` (after a failed commit, when time matters less).

        The file is never opened here outside SQLite: closing any descriptor of it
        would drop every POSIX lock this process holds on it, and another process
        would then checkpoint and delete the WAL under this connection.
        """
        if self.location == MEMORY:
            return None
        signature = self._signature()
        if deep:  # after a failed commit: is the file still a sound database?
            problems = integrity_problem(self._db)
            if problems is not None:
                return f"{self.location} is damaged ({problems})"
        elif signature == self._file_signature:
            return None
        self._file_signature = signature
        if signature is None:
            return f"{self.location} was deleted"
        return header_problem(self.location)

    def _signature(self) -> tuple[int, int, int] | None:
        """The file's inode, modification time and size; None when it is gone."""
        try:
            stat = os.stat(self.location)
        except OSError:
            return None
        return (stat.st_ino, stat.st_mtime_ns, stat.st_size)

    def checkpoint(self) -> None:
        """Idle time: have the WAL copied into the database file on the checkpointer's
        thread; returns at once."""
        if self.checkpointer is not None:
            self.checkpointer.request()

    def checkpointed(self) -> None:
        """Note the file as it is now (after our own writes), for ``damaged``."""
        self._file_signature = self._signature()

    # ----------------------------------------------------------- transactions

    @property
    def in_transaction(self) -> bool:
        return self._db.in_transaction

    def begin(self, wait: bool = True) -> bool:
        """Take the write lock (``BEGIN IMMEDIATE``) unless this connection holds it.

        True when a transaction was opened, so the caller can catch up with
        what other processes committed before it. Other processes wait for
        the lock (busy_timeout), so a caller must commit soon. With
        ``wait=False`` a lock held elsewhere raises StorageError at once.
        """
        if self._db.in_transaction:
            return False
        if self.read_only is not None:
            raise StorageError(f"changes cannot be saved: {self.read_only}")
        if not wait:
            self._db.execute("PRAGMA busy_timeout = 0")
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            raise StorageError(f"the context database is busy: {error}") from error
        finally:
            if not wait:
                self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return True

    def commit(self) -> None:
        # The main file changes only when the WAL is checkpointed into it; ``damaged``
        # reads the header again after one, so a commit need not stat the file.
        if self._db.in_transaction:
            self._db.execute("COMMIT")
            if self.checkpointer is not None:
                self.checkpointer.committed()

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """Part of the open transaction that is undone alone if it fails half-way.

        If SQLite rolled the whole transaction back instead (a full disk, an I/O error),
        the error is kept in ``lost``: the changes made before it in the transaction are
        gone as well, and whoever commits must fail every answer that reported them."""
        try:
            with savepoint(self._db):
                yield
        except BaseException as error:
            if not self._db.in_transaction:
                self.lost = error
            raise

    def take_lost(self) -> BaseException | None:
        """Why SQLite rolled back the open transaction by itself, once; else None."""
        lost, self.lost = self.lost, None
        return lost

    def rollback(self) -> None:
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    @contextmanager
    def write(self, wait: bool = True) -> Iterator[None]:
        """A write transaction, or a part of the one this connection has open.

        Commits (or rolls back) only a transaction it opened itself.
        """
        opened = self.begin(wait)
        try:
            yield
        except BaseException:
            if opened:
                self.rollback()
            raise
        if opened:
            self.commit()
