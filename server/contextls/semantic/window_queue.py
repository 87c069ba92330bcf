"""The queue of window items whose text has no vectors: filled by looking at the
windows whose revision moved, taken once an item's text has settled."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from contextls.semantic.vectors import PREFIX_CHARS, WINDOW_SETTLE_MS, Pending, digest


def window_waits(db: sqlite3.Connection) -> bool:
    """Window items queued whose text has not settled yet."""
    return bool(db.execute("SELECT EXISTS (SELECT 1 FROM semantic_window_queue)").fetchone()[0])


def window_revisions(db: sqlite3.Connection) -> dict[str, int]:
    """Each window's revision: it moves with every change to the window's items."""
    return dict(db.execute("SELECT root, revision FROM workspaces"))


def look_at_window(db: sqlite3.Connection, roots: Iterable[str], now_ms: int) -> None:
    """Queue the items of the ``roots``' windows whose text has no vectors, seen now.

    An item already queued with the same text keeps the time it was first seen (it
    settles); queue entries of items that left go. The caller holds a write
    transaction.
    """
    for root in roots:
        made = dict(
            db.execute(
                "SELECT id, digest FROM semantic_window WHERE root = ? AND chunk = 0", (root,)
            )
        )
        queued = dict(
            db.execute("SELECT id, digest FROM semantic_window_queue WHERE root = ?", (root,))
        )
        present: set[str] = set()
        settled: list[tuple[str, str]] = []
        changed: list[tuple[str, str, bytes, int]] = []
        for item_id, content in db.execute(
            "SELECT id, content FROM items WHERE root = ?", (root,)
        ).fetchall():
            present.add(item_id)
            made_from = digest(content[:PREFIX_CHARS])
            if made.get(item_id) == made_from:
                if item_id in queued:
                    settled.append((root, item_id))
            elif queued.get(item_id) != made_from:
                changed.append((root, item_id, made_from, now_ms))
        settled.extend((root, item_id) for item_id in queued.keys() - present)
        db.executemany("DELETE FROM semantic_window_queue WHERE root = ? AND id = ?", settled)
        db.executemany(
            "INSERT OR REPLACE INTO semantic_window_queue (root, id, digest, seen_at) "
            "VALUES (?, ?, ?, ?)",
            changed,
        )


def take_window(db: sqlite3.Connection, now_ms: int, limit: int) -> list[Pending]:
    """Take up to ``limit`` settled window items off their queue (rowid 0).

    Taking is the claim: the caller holds a write transaction, so two processes
    never take one item.
    """
    rows = db.execute(
        "SELECT q.root, q.id, i.content, i.metadata FROM semantic_window_queue AS q "
        "LEFT JOIN items AS i ON i.root = q.root AND i.id = q.id "
        "WHERE q.seen_at <= ? LIMIT ?",
        (now_ms - WINDOW_SETTLE_MS, limit),
    ).fetchall()
    db.executemany(
        "DELETE FROM semantic_window_queue WHERE root = ? AND id = ?", [row[:2] for row in rows]
    )
    return [
        Pending(0, root, item_id, content, metadata)
        for root, item_id, content, metadata in rows
        if content is not None
    ]


def without_vectors(db: sqlite3.Connection, root: str) -> int:
    """Items of ``root``'s window that have no vectors at all."""
    row = db.execute(
        "SELECT count(*) FROM items AS i WHERE i.root = ? AND NOT EXISTS (SELECT 1 FROM "
        "semantic_window AS s WHERE s.root = i.root AND s.id = i.id AND s.chunk = 0)",
        (root,),
    ).fetchone()
    return int(row[0])


def window_pending_count(db: sqlite3.Connection, root: str, held: Iterable[str] = ()) -> int:
    """Window items of ``root`` waiting to be embedded (a window holds at most 1,000):
    those queued, and those of ``held`` (taken off the queue to be embedded) still in the
    window, neither queued again nor stored yet."""
    row = db.execute(
        "SELECT count(*) FROM semantic_window_queue WHERE root = ?", (root,)
    ).fetchone()
    taken = sorted(set(held))
    if not taken:
        return int(row[0])
    marks = ", ".join("?" * len(taken))
    (waiting,) = db.execute(
        f"SELECT count(*) FROM items AS i WHERE i.root = ? AND i.id IN ({marks}) "
        "AND NOT EXISTS (SELECT 1 FROM semantic_window_queue AS q "
        "WHERE q.root = i.root AND q.id = i.id) AND NOT EXISTS (SELECT 1 FROM "
        "semantic_window AS s WHERE s.root = i.root AND s.id = i.id AND s.chunk = 0)",
        (root, *taken),
    ).fetchone()
    return int(row[0]) + int(waiting)
