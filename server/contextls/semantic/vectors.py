"""The vector side table: float32 BLOBs in the store's SQLite file, searched in memory.

Each row is one chunk of one archived item, with the model id that made it.

What waits to be embedded is a queue of archive rowids. The extra writes only
its own tables, so an add pays nothing for it: the worker queues the rows above
the last rowid it saw (``queue_archived``; archive rowids never repeat), so
finding work never scans the archive, and rows archived by a core install (no
extra) are found the same way.

Claims with a lease make two processes sharing the file never embed the same
item twice: an item is claimed in a write transaction before it is embedded,
and a claim whose lease ran out (its process died) goes back to the queue.

Vectors of items that left the archive (restored, pruned, merged) are swept in
the background once the worker sees the archive hold fewer rows than it has
vectors and queue entries for (``swept_behind``); a forget sweeps at once, before
its scrub. Searches never return such vectors meanwhile, because hits are
checked against the archive. Each sweep logs what it deleted in
``semantic_gone``, so an index in memory drops those rows without a reload.

Vectors are stored as the index holds them: 384 uint8 (zero point 128) and a
float32 factor per row (``pack``), 388 bytes instead of float32's 1,536. The
store pages are 1 KiB, so float32 rows spilled into overflow pages; reading
100,000 of them and quantising took ~0.9 s of a cold start, the packed rows
~0.2 s.

Items still in the window are embedded too, once their text has settled
(``WINDOW_SETTLE_MS``), into ``semantic_window``: when one is evicted its
vectors are copied from there instead of embedded, so what was just evicted
is searchable by meaning at once, without an embedding on a search's path.
The worker finds them by looking at the windows whose revision moved
(``look_at_window``): each item's text is hashed and compared with what its
vectors were made from.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any, Final

from contextls.semantic.model import DIMENSIONS
from contextls.storage.transaction import write_transaction

LEASE_MS: Final = 60_000
SWEEP_BATCH: Final = 5_000
"""Vector rows checked per sweep step (an index lookup each: ~5 ms)."""
GONE_KEEP: Final = 50_000
"""Entries kept in ``semantic_gone``; an index that fell further behind reloads."""
ROW_BYTES: Final = DIMENSIONS + 4
PREFIX_CHARS: Final = 64 * 1024
"""Text tokenised per item: 8 chunks never need more."""
WINDOW_SETTLE_MS: Final = 2_000
"""A window item is embedded once its text has not changed for this long: a file
followed while it is typed in changes every half second, and each embedding of a
whole file costs ~0.1 s of a core."""


@dataclass(frozen=True)
class Pending:
    rowid: int
    root: str
    id: str
    content: str
    metadata_text: str = "{}"
    """The item's metadata as stored (JSON): its path and language name its code."""

    @property
    def metadata(self) -> dict[str, Any]:
        try:
            found = json.loads(self.metadata_text or "{}")
        except ValueError:
            return {}
        return found if isinstance(found, dict) else {}


def log_gone(db: sqlite3.Connection, select_root_id: str, params: tuple[object, ...] = ()) -> int:
    cursor = db.execute(f"INSERT INTO semantic_gone (root, id) {select_root_id}", params)
    return max(cursor.rowcount, 0)


def has_work(db: sqlite3.Connection, now_ms: int) -> bool:
    """Archived items to embed, or window items whose text has settled."""
    return archive_work(db, now_ms) or bool(
        db.execute(
            "SELECT EXISTS (SELECT 1 FROM semantic_window_queue WHERE seen_at <= ?)",
            (now_ms - WINDOW_SETTLE_MS,),
        ).fetchone()[0]
    )


_MARK: Final = "SELECT CAST(value AS INTEGER) FROM semantic_meta WHERE key = 'archive_mark'"
"""The last archive rowid queued (or found already embedded)."""


def archive_work(db: sqlite3.Connection, now_ms: int) -> bool:
    """Archived items queued or not looked at yet, or claimed by a process whose lease
    ran out."""
    row = db.execute(
        "SELECT EXISTS (SELECT 1 FROM semantic_queue) "
        "OR EXISTS (SELECT 1 FROM semantic_claims WHERE until <= ?) "
        f"OR coalesce((SELECT max(rowid) FROM archive), 0) > coalesce(({_MARK}), 0)",
        (now_ms,),
    ).fetchone()
    return bool(row[0])


def queue_archived(db: sqlite3.Connection) -> int:
    """Queue the archive's rows above the mark, and move the mark; how many.

    The caller holds a write transaction. Rowids never repeat (``AUTOINCREMENT``), so a
    row above the mark was archived since the last look.
    """
    mark = db.execute(f"SELECT coalesce(({_MARK}), 0)").fetchone()[0]
    top = db.execute("SELECT coalesce(max(rowid), 0) FROM archive").fetchone()[0]
    if top <= mark:
        return 0
    cursor = db.execute(
        "INSERT OR IGNORE INTO semantic_queue (rowid) SELECT rowid FROM archive "
        "WHERE rowid > ? AND rowid <= ?",
        (mark, top),
    )
    db.execute(
        "INSERT OR REPLACE INTO semantic_meta (key, value) VALUES ('archive_mark', ?)", (top,)
    )
    return max(cursor.rowcount, 0)


def swept_behind(db: sqlite3.Connection) -> bool:
    """Items left the archive and their vectors (or queue entries) are still here.

    Every archived row is queued, claimed or embedded once ``queue_archived`` has run;
    more of those than archived rows means some left. Counting the archive takes
    ~2 ms at 100,000 rows: the worker asks once a look, never an add.
    """
    row = db.execute(
        "SELECT (SELECT coalesce(sum(indexed), 0) FROM semantic_counts) "
        "+ (SELECT count(*) FROM semantic_queue) + (SELECT count(*) FROM semantic_claims) "
        "> (SELECT count(*) FROM archive WHERE rowid <= coalesce((" + _MARK + "), 0))"
    ).fetchone()
    return bool(row[0])


def digest(content: str) -> bytes:
    """What a window item's vectors were made from (the embedded prefix of its text)."""
    import hashlib

    return hashlib.blake2b(content.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def window_vectors(
    db: sqlite3.Connection, item: Pending, model: str, made_from: bytes
) -> list[bytes]:
    """The item's vectors made while it was in the window, if made from this text."""
    rows = db.execute(
        "SELECT vector, digest FROM semantic_window WHERE root = ? AND id = ? AND model = ? "
        "ORDER BY chunk",
        (item.root, item.id, model),
    ).fetchall()
    if not rows or any(row[1] != made_from for row in rows):
        return []
    return [row[0] for row in rows]


def store_window(
    db: sqlite3.Connection, item: Pending, model: str, made_from: bytes, packed: list[bytes]
) -> None:
    """Keep a window item's vectors until it is evicted; the caller commits."""
    db.execute("DELETE FROM semantic_window WHERE root = ? AND id = ?", (item.root, item.id))
    db.executemany(
        "INSERT INTO semantic_window (root, id, chunk, digest, model, vector) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(item.root, item.id, n, made_from, model, blob) for n, blob in enumerate(packed)],
    )


_WINDOW_ORPHANS: Final = (
    "FROM semantic_window WHERE NOT EXISTS (SELECT 1 FROM items AS i "
    "WHERE i.root = semantic_window.root AND i.id = semantic_window.id)"
)


def drop_window_orphans(db: sqlite3.Connection) -> bool:
    """Delete window vectors of items that left the window without being archived
    (merged into another item, say); True if there were any. Runs in the caller's
    transaction, if there is one."""
    if not db.execute(f"SELECT EXISTS (SELECT 1 {_WINDOW_ORPHANS})").fetchone()[0]:
        return False
    db.execute(f"DELETE {_WINDOW_ORPHANS}")
    return True


def drop_unarchived_at(location: str) -> None:
    """``drop_unarchived`` on a connection of its own to the file at ``location``."""
    db = sqlite3.connect(location, isolation_level=None)
    try:
        drop_unarchived(db)
    finally:
        db.close()


def drop_unarchived(db: sqlite3.Connection) -> int:
    """Delete, in one write transaction, the vectors of every item no longer archived
    and the window vectors of items no longer in a window; how many items. A file
    without the vector tables is left alone."""
    if not db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'semantic_vectors'"
    ).fetchone():
        return 0
    with write_transaction(db):
        gone = db.execute(
            "SELECT DISTINCT v.root, v.id FROM semantic_vectors AS v WHERE NOT EXISTS "
            "(SELECT 1 FROM archive AS a WHERE a.root = v.root AND a.id = v.id)"
        ).fetchall()
        db.executemany("INSERT INTO semantic_gone (root, id) VALUES (?, ?)", gone)
        db.executemany("DELETE FROM semantic_vectors WHERE root = ? AND id = ?", gone)
        drop_window_orphans(db)
    return len(gone)


def trim_gone(db: sqlite3.Connection) -> None:
    """Keep the last ``GONE_KEEP`` entries of the log of items that left (autocommit)."""
    first, last = db.execute("SELECT min(seq), max(seq) FROM semantic_gone").fetchone()
    if last is not None and last - first >= GONE_KEEP + GONE_KEEP // 10:
        db.execute("DELETE FROM semantic_gone WHERE seq <= ?", (last - GONE_KEEP,))


def pending_count(db: sqlite3.Connection, root: str | None = None) -> int:
    """Archived items waiting for a vector (queued or being embedded), counted: ~34 ms
    at 100,000 waiting; the engine uses the archive's count minus ``indexed_count``."""
    sql = (
        "SELECT count(*) FROM (SELECT rowid FROM semantic_queue UNION "
        "SELECT rowid FROM semantic_claims UNION SELECT rowid FROM archive "
        f"WHERE rowid > coalesce(({_MARK}), 0)) AS w JOIN archive AS a ON a.rowid = w.rowid"
    )
    if root is None:
        return int(db.execute(sql).fetchone()[0])
    return int(db.execute(sql + " WHERE a.root = ?", (root,)).fetchone()[0])


def claim(
    db: sqlite3.Connection,
    owner: str,
    now_ms: int,
    limit: int,
    root: str | None = None,
) -> list[Pending]:
    """Claim up to ``limit`` queued items (of ``root``, when given) for ``owner``.

    Must run inside a write transaction (``BEGIN IMMEDIATE``), so two processes
    see each other's claims; the caller commits.
    """
    queue_archived(db)
    db.execute(
        "INSERT OR IGNORE INTO semantic_queue (rowid) "
        "SELECT rowid FROM semantic_claims WHERE until <= ?",
        (now_ms,),
    )
    db.execute("DELETE FROM semantic_claims WHERE until <= ?", (now_ms,))
    where = "" if root is None else " WHERE a.root = ?"
    params: tuple[object, ...] = (limit,) if root is None else (root, limit)
    # Rows queued for items that left the archive since: dropped as they are met.
    rows = db.execute(
        "SELECT q.rowid, a.root, a.id, a.content, a.metadata FROM semantic_queue AS q "
        f"LEFT JOIN archive AS a ON a.rowid = q.rowid{where} ORDER BY q.rowid LIMIT ?",
        params,
    ).fetchall()
    db.executemany("DELETE FROM semantic_queue WHERE rowid = ?", [(row[0],) for row in rows])
    live = [Pending(*row) for row in rows if row[1] is not None]
    db.executemany(
        "INSERT OR REPLACE INTO semantic_claims (rowid, owner, until) VALUES (?, ?, ?)",
        [(item.rowid, owner, now_ms + LEASE_MS) for item in live],
    )
    return live


def release(db: sqlite3.Connection, rowids: list[int]) -> None:
    """Give claims back to the queue (embedding stopped early); the caller commits."""
    db.executemany("DELETE FROM semantic_claims WHERE rowid = ?", [(r,) for r in rowids])
    db.executemany(
        "INSERT OR IGNORE INTO semantic_queue (rowid) VALUES (?)", [(r,) for r in rowids]
    )


def store(db: sqlite3.Connection, item: Pending, model: str, packed: list[bytes]) -> None:
    """Replace the item's vectors (``pack``: one per chunk), drop its claim; the caller commits.
    An item that left the archive while it was embedded gets none: a forget's scrub may
    have run meanwhile, and no vector may outlive what it was made of."""
    db.execute("DELETE FROM semantic_claims WHERE rowid = ?", (item.rowid,))
    if not db.execute(
        "SELECT 1 FROM archive WHERE rowid = ? AND root = ? AND id = ?",
        (item.rowid, item.root, item.id),
    ).fetchone():
        return
    if db.execute(
        "SELECT 1 FROM semantic_vectors WHERE root = ? AND id = ? AND model = ? LIMIT 1",
        (item.root, item.id, model),
    ).fetchone():
        # The same id archived again (restored, then evicted): its old rows go.
        db.execute("INSERT INTO semantic_gone (root, id) VALUES (?, ?)", (item.root, item.id))
        db.execute("DELETE FROM semantic_vectors WHERE root = ? AND id = ?", (item.root, item.id))
    db.executemany(
        "INSERT INTO semantic_vectors (root, id, chunk, model, vector) VALUES (?, ?, ?, ?, ?)",
        [(item.root, item.id, n, model, blob) for n, blob in enumerate(packed)],
    )
    # Its copy from the window, if any, has served.
    db.execute("DELETE FROM semantic_window WHERE root = ? AND id = ?", (item.root, item.id))


def sweep(db: sqlite3.Connection, after: int, batch: int = SWEEP_BATCH) -> tuple[int, int]:
    """Delete vectors of items no longer archived, among ``batch`` rows after rowid ``after``.

    Returns (the last rowid looked at, or 0 when the table's end was reached;
    how many items' vectors were deleted). The caller holds a write transaction.
    """
    last = db.execute(
        "SELECT max(rowid) FROM (SELECT rowid FROM semantic_vectors WHERE rowid > ? "
        "ORDER BY rowid LIMIT ?)",
        (after, batch),
    ).fetchone()[0]
    if last is None:
        return 0, 0
    orphans = (
        "SELECT DISTINCT v.root, v.id FROM semantic_vectors AS v "
        "WHERE v.rowid > ? AND v.rowid <= ? AND NOT EXISTS "
        "(SELECT 1 FROM archive AS a WHERE a.root = v.root AND a.id = v.id)"
    )
    gone = db.execute(orphans, (after, last)).fetchall()
    if gone:
        db.executemany("INSERT INTO semantic_gone (root, id) VALUES (?, ?)", gone)
        db.executemany("DELETE FROM semantic_vectors WHERE root = ? AND id = ?", gone)
        db.execute(
            "DELETE FROM semantic_gone WHERE seq <= (SELECT max(seq) FROM semantic_gone) - ?",
            (GONE_KEEP,),
        )
    return last, len(gone)


def indexed_exactly(db: sqlite3.Connection, root: str) -> int:
    """Archived items of ``root`` with vectors, counted: right before a sweep too (an
    index lookup a vector row of the root: ~50 ms at 100,000)."""
    row = db.execute(
        "SELECT count(*) FROM semantic_vectors AS v WHERE v.root = ? AND v.chunk = 0 "
        "AND EXISTS (SELECT 1 FROM archive AS a WHERE a.root = v.root AND a.id = v.id)",
        (root,),
    ).fetchone()
    return int(row[0])


def indexed_count(db: sqlite3.Connection, root: str) -> int:
    """Archived items of ``root`` with vectors (of the file's one model), without counting."""
    row = db.execute("SELECT indexed FROM semantic_counts WHERE root = ?", (root,)).fetchone()
    return int(row[0]) if row else 0
