"""How much of a workspace waits for vectors: the counts ``status`` shows."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from contextls.semantic import vectors, window_queue


class Held:
    """The window items the embedding worker has taken off the queue and not yet stored
    nor queued again, as (root, id): set by the worker's thread, read by ``status``."""

    def __init__(self) -> None:
        self._taken: frozenset[tuple[str, str]] = frozenset()

    def hold(self, taken: frozenset[tuple[str, str]]) -> None:
        self._taken = taken  # one assignment: a reader sees the old set or the new one

    def of(self, root: str) -> list[str]:
        return [item_id for held_root, item_id in self._taken if held_root == root]


def counts(
    db: sqlite3.Connection,
    root: str,
    archived: int,
    looked_at: int | None = None,
    held: Iterable[str] = (),
) -> dict[str, Any]:
    """``indexed``, ``pending`` (archived items without vectors) and ``windowPending`` of
    ``root``, whose archive holds ``archived`` items. ``looked_at``: the revision of the
    window the embedding worker last queued from; when the window moved since, its items
    without vectors wait too (the queue holds them only once the worker has looked).
    ``held``: the ids of ``root``'s window items the worker took off the queue to embed."""
    try:
        indexed = vectors.indexed_count(db, root)
        if indexed > archived:  # items left the archive; the worker sweeps them soon
            indexed = vectors.indexed_exactly(db, root)
        window_pending = window_queue.window_pending_count(db, root, held)
        if window_queue.window_revisions(db).get(root) != looked_at:
            window_pending = max(window_pending, window_queue.without_vectors(db, root))
    except sqlite3.OperationalError:  # the vector tables are not made yet
        indexed = window_pending = 0
    pending = max(archived - indexed, 0)
    return {"indexed": indexed, "pending": pending, "windowPending": window_pending}


class Remembered:
    """The last counts of each root, kept until the file changes (another connection
    commits: ``PRAGMA data_version``) or what they were counted from does: a window of
    hundreds of items takes ~4 ms to count, and every client asks for ``status`` after
    every change. Used on one thread (the event loop's)."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}

    def counts(
        self,
        db: sqlite3.Connection,
        root: str,
        archived: int,
        looked_at: int | None,
        held: Iterable[str],
    ) -> dict[str, Any]:
        held = tuple(sorted(held))
        version = db.execute("PRAGMA data_version").fetchone()[0]
        key = (id(db), version, archived, looked_at, held)
        last = self._last.get(root)
        if last is None or last[0] != key:
            last = self._last[root] = (key, counts(db, root, archived, looked_at, held))
        return dict(last[1])
