"""SQLite persistence: the windows, their counters, and the searchable archive.

One database holds every workspace (keyed by root URI). WAL mode lets an Emacs
and a VS Code server share it: each holds the write lock (``BEGIN IMMEDIATE``)
while it works, and catches up with the other's commits when it takes it.
The archive is indexed with FTS5 (external content) and ranked with bm25.

Durability: with WAL and ``synchronous=NORMAL`` (the default) a committed
transaction survives the process being killed; a power loss may take the last
commits. ``synchronous=FULL`` (setting ``durability: "full"``) syncs the WAL at
every commit, so commits survive power loss too, at ~0.2 ms more each.

A database written by a newer contextls (a larger ``schema`` in ``meta``) is
refused rather than changed; an older one is migrated when opened. A database
the process may not write (a read-only file or file system) is opened read
only: reads work, changes are refused with a message.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import msgspec

from contextls.core.items import Item
from contextls.core.snippets import Snippet, opening, snippet
from contextls.protocol.places import default_database, keep_private, private_file

log = logging.getLogger(__name__)

SCHEMA_VERSION: Final = 6
BUSY_TIMEOUT_MS: Final = 5000
MEMORY: Final = ":memory:"
SQLITE_HEADER: Final = b"SQLite format 3\x00"
SYNCHRONOUS: Final = {"normal": "NORMAL", "full": "FULL"}
PAGE_SIZE: Final = 1024
WAL_CHECKPOINT_PAGES: Final = 16_384
"""SQLite checkpoints the WAL itself only past this many pages (16 MiB at 1 KiB); the
server checkpoints when idle instead (``checkpoint``). Measured here, SQLite's default
of 1,000 made a commit ~18 µs dearer on average, on the path of every answer."""

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS workspaces (
    root TEXT PRIMARY KEY,
    next_id INTEGER NOT NULL DEFAULT 1,
    next_seq INTEGER NOT NULL DEFAULT 1,
    revision INTEGER NOT NULL DEFAULT 0,
    evicted_total INTEGER NOT NULL DEFAULT 0,
    budget INTEGER NOT NULL DEFAULT 0
);
-- Schema 3: the settings chosen for a window (JSON, camelCase keys; the rest are
-- defaults). They live with the window so every client sees the same limits.
CREATE TABLE IF NOT EXISTS window_settings (
    root TEXT PRIMARY KEY,
    chosen TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS items (
    root TEXT NOT NULL,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    metadata TEXT NOT NULL,
    timestamp INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    encoding TEXT NOT NULL,
    pinned INTEGER NOT NULL,
    stale INTEGER NOT NULL,
    PRIMARY KEY (root, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS archive (
    rowid INTEGER PRIMARY KEY,
    root TEXT NOT NULL,
    id TEXT NOT NULL,
    kind TEXT NOT NULL,
    label TEXT NOT NULL,
    content TEXT NOT NULL,
    metadata TEXT NOT NULL,
    timestamp INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    encoding TEXT NOT NULL,
    pinned INTEGER NOT NULL,
    archived_at INTEGER NOT NULL,
    reason TEXT NOT NULL,
    digest BLOB
);
CREATE INDEX IF NOT EXISTS archive_by_id ON archive (root, id);
CREATE INDEX IF NOT EXISTS archive_by_time ON archive (root, archived_at);
-- Schema 5: finding an archived copy of the same text by a hash of it. Schema 4's
-- index on the text's length read every archived text of that length: ~1 ms an
-- eviction among 5,000 notes of one length (bench 1).
DROP INDEX IF EXISTS archive_by_text;
CREATE INDEX IF NOT EXISTS archive_by_digest ON archive (root, digest);
CREATE VIRTUAL TABLE IF NOT EXISTS archive_fts USING fts5 (
    label, content, content='archive', content_rowid='rowid', tokenize='unicode61'
);
-- Archive rows not yet in archive_fts. Indexing one row costs more than the
-- rest of an eviction (FTS5 writes a segment per transaction), so evictions
-- only queue their rows, and the index catches up in bulk: when the server is
-- idle, and always before a search (see ``Store.index_backlog``).
CREATE TABLE IF NOT EXISTS archive_fts_backlog (rowid INTEGER PRIMARY KEY);
-- Schema 1 indexed each row as it was archived.
DROP TRIGGER IF EXISTS archive_fts_insert;
DROP TRIGGER IF EXISTS archive_fts_delete;
CREATE TRIGGER IF NOT EXISTS archive_fts_queue AFTER INSERT ON archive BEGIN
    INSERT INTO archive_fts_backlog (rowid) VALUES (new.rowid);
END;
CREATE TRIGGER IF NOT EXISTS archive_fts_forget AFTER DELETE ON archive BEGIN
    INSERT INTO archive_fts (archive_fts, rowid, label, content)
    SELECT 'delete', old.rowid, old.label, old.content
    WHERE NOT EXISTS (SELECT 1 FROM archive_fts_backlog WHERE rowid = old.rowid);
    DELETE FROM archive_fts_backlog WHERE rowid = old.rowid;
END;
-- Schema 4: each workspace's archive in bytes (kept by triggers, so reading it
-- never scans the archive) and what retention pruned.
CREATE TABLE IF NOT EXISTS archive_state (
    root TEXT PRIMARY KEY,
    bytes INTEGER NOT NULL DEFAULT 0,
    pruned_total INTEGER NOT NULL DEFAULT 0,
    last_count INTEGER,
    last_bytes INTEGER,
    last_at INTEGER,
    last_why TEXT
);
CREATE TRIGGER IF NOT EXISTS archive_bytes_in AFTER INSERT ON archive BEGIN
    INSERT INTO archive_state (root) VALUES (new.root) ON CONFLICT (root) DO NOTHING;
    UPDATE archive_state SET bytes = bytes + length(CAST(new.content AS BLOB))
    WHERE root = new.root;
END;
-- Schema 4: an id merged into another item (overlapping regions, a whole file
-- absorbing its regions, a duplicate archived again) still names it.
CREATE TABLE IF NOT EXISTS aliases (
    root TEXT NOT NULL,
    id TEXT NOT NULL,
    target TEXT NOT NULL,
    PRIMARY KEY (root, id)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS archive_bytes_out AFTER DELETE ON archive BEGIN
    UPDATE archive_state SET bytes = bytes - length(CAST(old.content AS BLOB))
    WHERE root = old.root;
END;
"""

_ITEM_COLUMNS: Final = "id, kind, content, metadata, timestamp, tokens, encoding, pinned"
_ARCHIVE_HIT_COLUMNS: Final = (
    "a.rowid AS rowid, a.id, a.kind, a.content, a.metadata, a.timestamp, a.tokens, a.encoding, "
    "a.pinned, a.archived_at, a.reason"
)
FTS_MERGE_PAGES: Final = 16
"""Pages of search-index merging after one prune batch (see ``give_back_space``)."""
VACUUM_STEP_PAGES: Final = 256
"""Free pages given back to the file system after one prune batch: moving pages to
fill the holes costs, and an idle turn must stay short (``bench_lifecycle.py``)."""
SEARCH_CANDIDATES: Final = 250
"""How many of the most recent matches a search ranks (see ``Store.search``)."""
_WORD = re.compile(r"\w+", re.UNICODE)
_EVICTION_REASONS: Final = ("maxItems", "maxTokens")


class StorageError(Exception):
    """The database cannot be used (unwritable directory, locked for too long, disk full)."""


class NewerSchema(StorageError):
    """The database was written by a newer contextls; it is left alone."""


@dataclass(slots=True)
class WorkspaceRow:
    next_id: int
    next_seq: int
    revision: int
    evicted_total: int
    budget: int = 0
    """The adaptive budget the window has reached (0: none yet, or the fixed policy)."""


@dataclass(slots=True)
class ArchiveState:
    bytes: int = 0
    pruned_total: int = 0
    last_pruned: tuple[int, int, int, str] | None = None
    """(items, bytes, at, why) of the last prune."""


@dataclass(frozen=True, slots=True)
class Retention:
    """What the archive of one workspace may keep (0: no limit)."""

    max_items: int = 0
    max_bytes: int = 0
    max_age_days: float = 0

    @property
    def max_age_ms(self) -> int:
        return int(self.max_age_days * 86_400_000)

    @property
    def bounded(self) -> bool:
        return bool(self.max_items or self.max_bytes or self.max_age_days)


@dataclass(slots=True)
class ArchiveHit:
    item: Item
    score: float
    snippet: Snippet
    archived_at: int
    reason: str


class Store:
    def __init__(self, location: str | Path | None = None, synchronous: str = "normal") -> None:
        self.location = str(location) if location is not None else str(default_database())
        self.synchronous = SYNCHRONOUS[synchronous]
        self.moved_aside: Path | None = None
        """Where a corrupt database was moved, so the server can tell the user."""
        self.read_only: str | None = None
        """Why changes cannot be saved (the file or its file system is read-only), or None."""
        self.tightened: list[str] = []
        """Files that others could read, made private at open (for the person to hear)."""
        self._data_version = 0
        self.needs_scrub = False
        """A commit forgot items: ``scrub`` must run after it."""
        self._file_signature: tuple[int, int, int] | None = None
        self._db = self._open()
        self._file_signature = self._signature()

    # ---------------------------------------------------------------- opening

    def _open(self) -> sqlite3.Connection:
        if self.location != MEMORY:
            self._make_private()
        try:
            return self._connect()
        except NewerSchema:
            raise
        except sqlite3.OperationalError as error:
            if _is_read_only(error) and Path(self.location).exists():
                return self._connect_read_only(error)
            raise StorageError(f"cannot open {self.location}: {error}") from error
        except sqlite3.DatabaseError as error:
            if self.location == MEMORY:
                raise StorageError(f"cannot open {self.location}: {error}") from error
            self.moved_aside = self._move_aside()
            log.warning("%s was corrupt (%s); moved to %s", self.location, error, self.moved_aside)
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
            version = _schema_version(db)
            if version > SCHEMA_VERSION:
                raise NewerSchema(_newer_message(self.location, version))
            if version == 0:
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
            if version < SCHEMA_VERSION:
                self._migrate(db, version)
            db.execute("SELECT count(*) FROM workspaces").fetchone()
        except BaseException:
            db.close()
            raise
        return db

    def _migrate(self, db: sqlite3.Connection, version: int) -> None:
        """Bring a new (0) or older database to ``SCHEMA_VERSION``, in one transaction."""
        db.execute("BEGIN IMMEDIATE")
        try:
            columns = {row[1] for row in db.execute("PRAGMA table_info(archive)")}
            if version and "digest" not in columns:
                db.execute("ALTER TABLE archive ADD COLUMN digest BLOB")
            workspace_columns = {row[1] for row in db.execute("PRAGMA table_info(workspaces)")}
            if version and "budget" not in workspace_columns:
                # Schema 6: the adaptive budget a window has reached (0: none yet).
                db.execute("ALTER TABLE workspaces ADD COLUMN budget INTEGER NOT NULL DEFAULT 0")
            # The script only adds what is missing (and drops schema 1's triggers).
            for statement in _statements(_SCHEMA):
                db.execute(statement)
            if version and version < 5:
                _digest_archive(db)
            if version and version < 4:
                # What the archive holds already, for the byte totals the triggers keep.
                db.execute(
                    "INSERT INTO archive_state (root, bytes) "
                    "SELECT root, total(length(CAST(content AS BLOB))) FROM archive GROUP BY root "
                    "ON CONFLICT (root) DO UPDATE SET bytes = excluded.bytes"
                )
            db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,)
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        if version:
            log.info("migrated %s from schema %d to %d", self.location, version, SCHEMA_VERSION)
        if self.location != MEMORY and db.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:
            # A database from before schema 4 gives freed pages back only after a
            # VACUUM that switches it to incremental auto-vacuum (once).
            db.execute("PRAGMA auto_vacuum = INCREMENTAL")
            try:
                db.execute("VACUUM")
            except sqlite3.OperationalError as error:  # another process reads: next time
                log.warning("could not switch %s to incremental vacuum: %s", self.location, error)

    def _connect_read_only(self, why: sqlite3.OperationalError) -> sqlite3.Connection:
        base = Path(self.location).resolve().as_uri()
        try:
            try:
                db = sqlite3.connect(
                    base + "?mode=ro", uri=True, isolation_level=None, check_same_thread=False
                )
                version = _schema_version(db)
            except sqlite3.OperationalError:
                # A WAL database on a read-only file system without its -shm file:
                # nobody can change it there, so SQLite may read it as immutable.
                db = sqlite3.connect(
                    base + "?immutable=1", uri=True, isolation_level=None, check_same_thread=False
                )
                version = _schema_version(db)
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if version > SCHEMA_VERSION:
                db.close()
                raise NewerSchema(_newer_message(self.location, version))
            if version < SCHEMA_VERSION:
                db.close()
                raise StorageError(
                    f"{self.location} is read-only and needs an upgrade to schema "
                    f"{SCHEMA_VERSION}; make it writable once"
                )
            db.execute("SELECT count(*) FROM workspaces").fetchone()
        except sqlite3.DatabaseError as error:
            raise StorageError(f"cannot open {self.location}: {error}") from error
        self.read_only = f"{self.location} is read-only ({why})"
        log.warning("%s; serving it read-only", self.read_only)
        return db

    def _move_aside(self) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        original = Path(self.location)
        target = original.with_name(f"{original.name}.corrupt-{stamp}")
        original.replace(target)
        for suffix in ("-wal", "-shm"):
            side = original.with_name(original.name + suffix)
            if side.exists():
                side.replace(target.with_name(target.name + suffix))
        return target

    def close(self) -> None:
        self._db.close()

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
        what we commit from now on would be lost. Cheap: a stat, and a 100-byte
        read only when the stat changed. ``deep`` also runs SQLite's
        ``quick_check`` (after a failed commit, when time matters less).
        """
        if self.location == MEMORY:
            return None
        if deep:  # after a failed commit: is the file still a sound database?
            self._file_signature = None
            try:
                problems = self._db.execute("PRAGMA quick_check(1)").fetchone()[0]
            except sqlite3.DatabaseError as error:
                problems = str(error)
            if problems != "ok":
                return f"{self.location} is damaged ({problems})"
        signature = self._signature()
        if signature == self._file_signature:
            return None
        self._file_signature = signature
        try:
            with open(self.location, "rb") as file:
                header = file.read(100)
        except OSError as error:
            return f"{self.location} cannot be read: {error.strerror}"
        if len(header) < 100 and signature is not None and signature[2] == 0:
            return None  # a new database that has not been checkpointed yet
        if not header.startswith(SQLITE_HEADER):
            return f"{self.location} was overwritten: it is no longer an SQLite database"
        return None

    def _signature(self) -> tuple[int, int, int] | None:
        if self.location == MEMORY:
            return None
        try:
            stat = os.stat(self.location)
        except OSError:
            return (0, 0, -1)
        return (stat.st_ino, stat.st_mtime_ns, stat.st_size)

    def checkpoint(self) -> None:
        """Copy the WAL into the database file without waiting for anyone (idle time)."""
        if self.location == MEMORY or self.read_only is not None or self._db.in_transaction:
            return
        self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        self.checkpointed()

    def checkpointed(self) -> None:
        """Note the file as it is now (after our own writes), for ``damaged``."""
        self._file_signature = self._signature()

    # ------------------------------------------------------------ concurrency

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

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """Part of the open transaction that is undone alone if it fails half-way."""
        self._db.execute("SAVEPOINT change")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK TO change")
            self._db.execute("RELEASE change")
            raise
        self._db.execute("RELEASE change")

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

    # ------------------------------------------------------------- workspaces

    def workspace(self, root: str) -> WorkspaceRow:
        row = self._db.execute(
            "SELECT next_id, next_seq, revision, evicted_total, budget FROM workspaces "
            "WHERE root = ?",
            (root,),
        ).fetchone()
        if row is None:
            return WorkspaceRow(1, 1, 0, 0)
        return WorkspaceRow(*row)

    def save_workspace(self, root: str, row: WorkspaceRow) -> None:
        self._db.execute(
            "INSERT INTO workspaces (root, next_id, next_seq, revision, evicted_total, budget) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (root) DO UPDATE SET "
            "next_id = excluded.next_id, next_seq = excluded.next_seq, "
            "revision = excluded.revision, evicted_total = excluded.evicted_total, "
            "budget = excluded.budget",
            (root, row.next_id, row.next_seq, row.revision, row.evicted_total, row.budget),
        )

    def window_settings(self, root: str) -> dict[str, Any]:
        """The settings chosen for this window (camelCase keys), or {}."""
        row = self._db.execute(
            "SELECT chosen FROM window_settings WHERE root = ?", (root,)
        ).fetchone()
        if row is None:
            return {}
        chosen = msgspec.json.decode(row[0])
        return chosen if isinstance(chosen, dict) else {}

    def save_window_settings(self, root: str, chosen: dict[str, Any]) -> None:
        if not chosen:
            self._db.execute("DELETE FROM window_settings WHERE root = ?", (root,))
            return
        self._db.execute(
            "INSERT INTO window_settings (root, chosen) VALUES (?, ?) "
            "ON CONFLICT (root) DO UPDATE SET chosen = excluded.chosen",
            (root, _json(chosen)),
        )

    # ------------------------------------------------------------------ items

    def load_window(self, root: str) -> list[Item]:
        rows = self._db.execute(
            f"SELECT {_ITEM_COLUMNS}, stale, seq FROM items WHERE root = ? ORDER BY seq", (root,)
        ).fetchall()
        return [_item(row[:8], stale=bool(row[8]), seq=row[9]) for row in rows]

    def save_items(self, root: str, items: Iterable[Item]) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO items (root, id, seq, kind, content, metadata, timestamp, "
            "tokens, encoding, pinned, stale) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    root,
                    item.id,
                    item.seq,
                    item.kind,
                    item.content,
                    _json(item.metadata),
                    item.timestamp,
                    item.tokens,
                    item.encoding,
                    item.pinned,
                    item.stale,
                )
                for item in items
            ],
        )

    def delete_items(self, root: str, ids: Iterable[str]) -> None:
        self._db.executemany(
            "DELETE FROM items WHERE root = ? AND id = ?", [(root, item_id) for item_id in ids]
        )

    # ---------------------------------------------------------------- archive

    def archive(self, root: str, items: Iterable[Item], reason: str, at: int) -> int:
        """Add items that left a window to the archive; returns how many.

        An id is never in the window and the archive at once (restoring takes
        it out of the archive), so there is nothing to replace. The workspace
        keeps its archive count with this, without ``count(*)`` over a large
        archive.
        """
        rows = [
            (
                root,
                item.id,
                item.kind,
                item.label,
                item.content,
                _json(item.metadata),
                item.timestamp,
                item.tokens,
                item.encoding,
                item.pinned,
                at,
                reason,
                text_digest(item.content),
            )
            for item in items
        ]
        self._db.executemany(
            "INSERT INTO archive (root, id, kind, label, content, metadata, timestamp, tokens, "
            "encoding, pinned, archived_at, reason, digest) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        return len(rows)

    def archived(self, root: str, ids: list[str]) -> dict[str, Item]:
        found: dict[str, Item] = {}
        for item_id in ids:
            row = self._db.execute(
                f"SELECT {_ITEM_COLUMNS} FROM archive WHERE root = ? AND id = ?", (root, item_id)
            ).fetchone()
            if row is not None:
                found[item_id] = _item(row)
        return found

    def unarchive(self, root: str, ids: Iterable[str]) -> int:
        """Drop archive entries; returns how many there were."""
        keys = [(root, item_id) for item_id in ids]
        if not keys:
            return 0
        cursor = self._db.executemany("DELETE FROM archive WHERE root = ? AND id = ?", keys)
        return max(cursor.rowcount, 0)  # rows of this statement, not of its triggers

    def backlog(self) -> int:
        """How many archive rows wait to be indexed for search."""
        return int(self._db.execute("SELECT count(*) FROM archive_fts_backlog").fetchone()[0])

    def index_backlog(self, limit: int | None = None) -> int:
        """Index (up to ``limit``) archive rows for search, oldest first; returns how many.

        Runs in the caller's transaction, or in one of its own.
        """
        oldest = "SELECT rowid FROM archive_fts_backlog ORDER BY rowid LIMIT ?"
        bound = (-1 if limit is None else limit,)  # LIMIT -1: no limit
        with self.write():
            count = self._db.execute(
                "INSERT INTO archive_fts (rowid, label, content) "
                f"SELECT rowid, label, content FROM archive WHERE rowid IN ({oldest})",
                bound,
            ).rowcount
            self._db.execute(f"DELETE FROM archive_fts_backlog WHERE rowid IN ({oldest})", bound)
        return max(count, 0)

    def archive_groups(self) -> list[tuple[str, list[Item], str, int]]:
        """Every archive entry as (root, [item], reason, archived_at), oldest first."""
        rows = self._db.execute(
            f"SELECT root, {_ITEM_COLUMNS}, reason, archived_at FROM archive ORDER BY rowid"
        ).fetchall()
        return [(row[0], [_item(row[1:9])], row[9], row[10]) for row in rows]

    def archived_count(self, root: str) -> int:
        return int(
            self._db.execute("SELECT count(*) FROM archive WHERE root = ?", (root,)).fetchone()[0]
        )

    def last_evicted(self, root: str, limit: int) -> list[Item]:
        rows = self._db.execute(
            f"SELECT {_ITEM_COLUMNS} FROM archive WHERE root = ? AND reason IN (?, ?) "
            "ORDER BY archived_at DESC, rowid DESC LIMIT ?",
            (root, *_EVICTION_REASONS, limit),
        ).fetchall()
        return [_item(row) for row in reversed(rows)]

    def search(
        self, root: str, query: str, limit: int, kinds: Sequence[str] | None = None
    ) -> list[ArchiveHit]:
        """bm25-ranked archive hits: all words first; if none match, any word.

        Only the ``SEARCH_CANDIDATES`` most recently archived matches are
        ranked: ranking every match of a common word costs ~30 ms on a
        100,000-item archive, the most recent 250 about 4.
        """
        words = _WORD.findall(query)
        if not words:
            return []
        if self.read_only is None:
            self.index_backlog()
        quoted = ['"' + word.replace('"', '""') + '"' for word in words]
        hits = self._match(root, " AND ".join(quoted), words, limit, kinds)
        if not hits and len(quoted) > 1:
            hits = self._match(root, " OR ".join(quoted), words, limit, kinds)
        return hits

    def _match(
        self,
        root: str,
        match: str,
        words: Sequence[str],
        limit: int,
        kinds: Sequence[str] | None,
    ) -> list[ArchiveHit]:
        kind_filter = ""
        params: list[Any] = [match, root]
        if kinds:
            kind_filter = f" AND a.kind IN ({', '.join('?' * len(kinds))})"
            params.extend(kinds)
        params.extend((SEARCH_CANDIDATES, limit))
        # bm25 for the most recent candidates only; snippets for the hits only.
        rows = self._db.execute(
            "SELECT * FROM ("
            f"SELECT {_ARCHIVE_HIT_COLUMNS}, bm25(archive_fts, 2.0, 1.0) AS rank "
            "FROM archive_fts JOIN archive AS a ON a.rowid = archive_fts.rowid "
            f"WHERE archive_fts MATCH ? AND a.root = ?{kind_filter} "
            "ORDER BY archive_fts.rowid DESC LIMIT ?"
            ") ORDER BY rank, rowid DESC LIMIT ?",
            params,
        ).fetchall()
        if not rows:
            return []
        hits = []
        for row in rows:
            item = _item(row[1:9])
            hits.append(
                ArchiveHit(
                    item=item,
                    score=-float(row[11]),
                    snippet=snippet(item.content, words)
                    or snippet(item.label, words)
                    or opening(item.content),
                    archived_at=row[9],
                    reason=row[10],
                )
            )
        return hits

    # ---------------------------------------------------------------- aliases

    def save_aliases(self, root: str, aliases: dict[str, str]) -> None:
        self._db.executemany(
            "INSERT INTO aliases (root, id, target) VALUES (?, ?, ?) "
            "ON CONFLICT (root, id) DO UPDATE SET target = excluded.target",
            [(root, old, new) for old, new in aliases.items()],
        )

    def alias_targets(self, root: str, ids: Sequence[str]) -> dict[str, str]:
        """Where each merged-away id went (one step; callers follow chains)."""
        if not ids:
            return {}
        marks = ", ".join("?" * len(ids))
        return dict(
            self._db.execute(
                f"SELECT id, target FROM aliases WHERE root = ? AND id IN ({marks})",
                (root, *ids),
            ).fetchall()
        )

    def archived_duplicates(self, root: str, item: Item) -> list[str]:
        """Ids of archived items with the same source and text as ``item``."""
        path = item.metadata.get("path")
        same_source = (
            "json_extract(metadata, '$.path') = ?"
            if isinstance(path, str)
            else "json_extract(metadata, '$.path') IS NULL"
        )
        rows = self._db.execute(
            "SELECT id FROM archive INDEXED BY archive_by_digest WHERE root = ? AND digest = ? "
            f"AND kind = ? AND content = ? AND {same_source}",
            (root, text_digest(item.content), item.kind, item.content)
            + ((path,) if isinstance(path, str) else ()),
        )
        return [row[0] for row in rows]

    def delete_archived(self, root: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        marks = ", ".join("?" * len(ids))
        gone = self._db.execute(
            f"DELETE FROM archive WHERE root = ? AND id IN ({marks})", (root, *ids)
        ).rowcount
        return max(gone, 0)

    # -------------------------------------------------------------- lifecycle

    def archive_state(self, root: str) -> ArchiveState:
        row = self._db.execute(
            "SELECT bytes, pruned_total, last_count, last_bytes, last_at, last_why "
            "FROM archive_state WHERE root = ?",
            (root,),
        ).fetchone()
        if row is None:
            return ArchiveState()
        bytes_, total, count, pruned_bytes, at, why = row
        last = (count, pruned_bytes, at, why) if count is not None else None
        return ArchiveState(int(bytes_), int(total), last)

    def oldest_archived_at(self, root: str) -> int | None:
        row = self._db.execute(
            "SELECT min(archived_at) FROM archive WHERE root = ?", (root,)
        ).fetchone()
        return None if row[0] is None else int(row[0])

    def prune(self, root: str, keep: Retention, now: int, batch: int) -> tuple[int, int, str]:
        """Delete the oldest archived items beyond ``keep`` (at most ``batch``).

        Returns (items, bytes, why); (0, 0, "") when nothing was over. Their
        search index entries go with them (the delete trigger).
        """
        doomed: list[int] = []
        why = ""
        if keep.max_age_ms:
            doomed = [
                row[0]
                for row in self._db.execute(
                    "SELECT rowid FROM archive WHERE root = ? AND archived_at < ? "
                    "ORDER BY archived_at, rowid LIMIT ?",
                    (root, now - keep.max_age_ms, batch),
                )
            ]
            why = f"older than archiveMaxAgeDays {keep.max_age_days:g}"
        if not doomed and keep.max_items:
            over = self.archived_count(root) - keep.max_items
            if over > 0:
                doomed = self._oldest(root, min(over, batch))
                why = f"beyond archiveMaxItems {keep.max_items:,}"
        if not doomed and keep.max_bytes:
            state = self.archive_state(root)
            if state.bytes > keep.max_bytes:
                over_bytes = state.bytes - keep.max_bytes
                for rowid, size in self._db.execute(
                    "SELECT rowid, length(CAST(content AS BLOB)) FROM archive WHERE root = ? "
                    "ORDER BY archived_at, rowid LIMIT ?",
                    (root, batch),
                ):
                    doomed.append(rowid)
                    over_bytes -= size
                    if over_bytes <= 0:
                        break
                why = f"beyond archiveMaxBytes {keep.max_bytes:,}"
        if not doomed:
            return 0, 0, ""
        marks = ", ".join("?" * len(doomed))
        freed = self._db.execute(
            f"SELECT total(length(CAST(content AS BLOB))) FROM archive WHERE rowid IN ({marks})",
            doomed,
        ).fetchone()[0]
        self._db.execute(f"DELETE FROM archive WHERE rowid IN ({marks})", doomed)
        self._db.execute(
            "UPDATE archive_state SET pruned_total = pruned_total + ?, last_count = ?, "
            "last_bytes = ?, last_at = ?, last_why = ? WHERE root = ?",
            (len(doomed), len(doomed), int(freed), now, why, root),
        )
        return len(doomed), int(freed), why

    def _oldest(self, root: str, count: int) -> list[int]:
        return [
            row[0]
            for row in self._db.execute(
                "SELECT rowid FROM archive WHERE root = ? ORDER BY archived_at, rowid LIMIT ?",
                (root, count),
            )
        ]

    def give_back_space(self) -> int:
        """Merge the search index a step and return free pages to the file system;
        how many pages were free. Outside any transaction (it makes its own), and
        it does not wait for another process's lock: it is idle work.
        """
        if self._db.in_transaction or self.read_only is not None or self.location == MEMORY:
            return 0
        free = int(self._db.execute("PRAGMA freelist_count").fetchone()[0])
        # Deleted rows stay in the search index's segments as tombstones until the
        # segments merge; a bounded merge step after each prune keeps the index near
        # the size of what it indexes (measured: 15 MB -> 9 MB for 10,000 ~1 KB items).
        # incremental_vacuum frees one page per step of its statement, and Python's
        # execute() steps once: only executescript runs it to the end.
        self._db.execute("PRAGMA busy_timeout = 0")
        try:
            self._db.executescript(
                f"INSERT INTO archive_fts (archive_fts, rank) VALUES ('merge', {FTS_MERGE_PAGES});"
                f"PRAGMA incremental_vacuum({VACUUM_STEP_PAGES});"
            )
        except sqlite3.OperationalError as error:  # another process writes: next time
            log.info("giving free pages back waits: %s", error)
        finally:
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self.checkpointed()
        return free

    def archived_ids(self, root: str, query: str) -> list[str]:
        """Ids of archived items whose text holds every word of ``query`` (all of them)."""
        words = _WORD.findall(query)
        if not words:
            return []
        if self.read_only is None:  # a read-only file is searched as it is
            self.index_backlog()
        match = " AND ".join('"' + word.replace('"', '""') + '"' for word in words)
        return [
            row[0]
            for row in self._db.execute(
                "SELECT a.id FROM archive_fts JOIN archive AS a ON a.rowid = archive_fts.rowid "
                "WHERE archive_fts MATCH ? AND a.root = ? ORDER BY a.rowid",
                (match, root),
            )
        ]

    def archived_summaries(self, root: str, ids: Sequence[str]) -> list[Item]:
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        rows = self._db.execute(
            f"SELECT {_ITEM_COLUMNS} FROM archive WHERE root = ? AND id IN ({marks}) "
            "ORDER BY rowid",
            (root, *ids),
        ).fetchall()
        return [_item(row) for row in rows]

    def forget(self, root: str, ids: Sequence[str]) -> int:
        """Delete these archived items (and their index entries); how many rows went.

        ``secure_delete`` is on for the deletes, so their text is zeroed where it lay;
        ``scrub`` after the commit removes what other pages still hold.
        """
        # On before anything is deleted: the window's rows go after this, too.
        self._db.execute("PRAGMA secure_delete = ON")
        self.needs_scrub = True
        if not ids:
            return 0
        marks = ", ".join("?" * len(ids))
        gone = self._db.execute(
            f"DELETE FROM archive WHERE root = ? AND id IN ({marks})", (root, *ids)
        ).rowcount
        return max(gone, 0)

    def scrub(self) -> None:
        """After a commit that forgot items: leave no copy of their text in the files.

        The search index drops deleted entries only when its segments merge
        (``optimize``); ``VACUUM`` rewrites the file without free pages or the
        slack of old rows; the WAL, which holds the pages as they were, is
        checkpointed and truncated. Costs about a rewrite of the file.
        """
        if not self.needs_scrub or self.location == MEMORY:
            self.needs_scrub = False
            return
        self.needs_scrub = False
        db = self._db
        db.execute("INSERT INTO archive_fts (archive_fts) VALUES ('optimize')")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("PRAGMA secure_delete = OFF")
        self.checkpointed()

    def archive_rows(self, root: str) -> list[tuple[Item, int, str]]:
        """Every archived item of a workspace, oldest first, with when and why it went."""
        rows = self._db.execute(
            f"SELECT {_ITEM_COLUMNS}, archived_at, reason FROM archive WHERE root = ? "
            "ORDER BY archived_at, rowid",
            (root,),
        ).fetchall()
        return [(_item(row[:8]), int(row[8]), str(row[9])) for row in rows]


def _json(value: dict[str, Any]) -> str:
    return msgspec.json.encode(value).decode()


def _item(row: tuple[Any, ...], stale: bool = False, seq: int = 0) -> Item:
    item_id, kind, content, metadata, timestamp, tokens, encoding, pinned = row
    return Item(
        id=item_id,
        kind=kind,
        content=content,
        metadata=msgspec.json.decode(metadata),
        timestamp=timestamp,
        tokens=tokens,
        pinned=bool(pinned),
        stale=stale,
        seq=seq,
        encoding=encoding,
    )


def _statements(script: str) -> Iterator[str]:
    """The SQL statements of a script (triggers included), one by one."""
    pending = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--") and not pending:
            continue
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending.strip()
            pending = ""


def text_digest(text: str) -> bytes:
    """What finds an archived copy of a text (16 bytes of BLAKE2b)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _digest_archive(db: sqlite3.Connection) -> None:
    """Schema 5: the digest of every text archived before it (once, at migration)."""
    after = 0
    while rows := db.execute(
        "SELECT rowid, content FROM archive WHERE rowid > ? ORDER BY rowid LIMIT 5000", (after,)
    ).fetchall():
        db.executemany(
            "UPDATE archive SET digest = ? WHERE rowid = ?",
            [(text_digest(content), rowid) for rowid, content in rows],
        )
        after = rows[-1][0]


def _schema_version(db: sqlite3.Connection) -> int:
    """The schema a database was written with; 0 for a new (empty) one."""
    has_meta = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if has_meta is None:
        has_tables = db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone()
        return 1 if has_tables else 0
    row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    try:
        return int(row[0]) if row is not None else 1
    except ValueError:
        return 1


def _newer_message(location: str, version: int) -> str:
    return (
        f"{location} was written by a newer contextls (schema {version}; this one knows "
        f"{SCHEMA_VERSION}); upgrade contextls, or set `storage` to another file"
    )


def _is_read_only(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "readonly" in text or "read-only" in text or "unable to open" in text
