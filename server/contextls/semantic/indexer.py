"""Embedding queued archive items: claim a few, embed them outside any transaction, store.

Runs on the engine's worker thread while the server is idle, never on an add's
path (a search may catch up a small backlog of its own root first). Each step
is bounded: it claims ``batch`` items, and stops between items when asked to,
giving the rest of its claims back.
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from contextls.semantic import names, vector_index, vectors, window_queue
from contextls.semantic.model import Embedding
from contextls.storage.transaction import write_transaction

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

OWNER = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"

MAX_CHUNKS = 8
"""Chunks embedded per item (~2,000 word pieces, ~0.1 s): later text of a huge item
is not embedded (its keyword index still has all of it)."""


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def embed_item(
    embedder: Embedding, content: str, metadata: dict[str, Any] | None = None
) -> npt.NDArray[np.float32]:
    """One unit vector per ~256-piece chunk of ``content`` (the first ``MAX_CHUNKS``), each
    chunk embedded on its own, headed by its names when it is code (``names``; the
    item's ``metadata`` says its path and language).

    Blank text is not embedded: the model would give it a vector that every short
    query is somewhat close to (an empty ``__init__.py`` scored 0.31 against
    "xyzzyplugh"). It gets one zero vector instead, which is close to nothing and
    marks the item as done.
    """
    import numpy as np

    if not content.strip():
        return np.zeros((1, embedder.dimensions), dtype=np.float32)
    text = content[: vectors.PREFIX_CHARS]
    chunks = names.chunk_pieces(embedder, text, metadata or {})[:MAX_CHUNKS]
    # One chunk per run: a batch of 8 chunks of 256 pieces took the process to 780 MiB
    # (the runtime's buffers for the batch, never given back whole) and was slower on
    # one core (67 s against 50 s for 125 modules of the standard library).
    return np.vstack([embedder.embed_ids([chunk]) for chunk in chunks])


def _transaction(db: sqlite3.Connection, work: Callable[[], object]) -> object:
    with write_transaction(db):
        return work()


def index_some(
    db: sqlite3.Connection,
    embedder: Embedding,
    batch: int = 8,
    root: str | None = None,
    go_on: Callable[[], bool] = lambda: True,
    owner: str = OWNER,
    clock: Callable[[], int] = now_ms,
) -> int:
    """Embed up to ``batch`` queued items (of ``root``, when given); returns how many.

    ``db`` is in autocommit mode (``isolation_level=None``) and not in a
    transaction: claiming and storing each take a short write transaction.
    ``go_on`` is asked between items; when it says no, the rest are given back.
    """
    claimed: list[vectors.Pending] = _transaction(  # type: ignore[assignment]
        db, lambda: vectors.claim(db, owner, clock(), batch, root)
    )
    model = embedder.model_id
    done: list[tuple[vectors.Pending, list[bytes]]] = []
    for item in claimed:
        made = vectors.window_vectors(
            db, item, model, vectors.digest(item.content[: vectors.PREFIX_CHARS])
        )
        if not made:  # not embedded while it was in the window: embed it now
            if done and not go_on():
                break
            made = vector_index.pack(embed_item(embedder, item.content, item.metadata))
        done.append((item, made))
    left = [item.rowid for item in claimed[len(done) :]]

    def save() -> None:
        for item, packed in done:
            vectors.store(db, item, model, packed)
        if left:
            vectors.release(db, left)

    if done or left:
        _transaction(db, save)
    return len(done)


def look_at_windows(
    db: sqlite3.Connection, seen: dict[str, int], clock: Callable[[], int] = now_ms
) -> dict[str, int]:
    """Queue the window items whose text has no vectors, in the windows whose revision
    moved since ``seen`` (every window when it is empty); the revisions looked at."""

    def look() -> dict[str, int]:
        revisions = window_queue.window_revisions(db)
        moved = [r for r in revisions.keys() | seen.keys() if revisions.get(r) != seen.get(r)]
        if moved:
            window_queue.look_at_window(db, moved, clock())
        return revisions

    return _transaction(db, look)  # type: ignore[return-value]


def index_window(
    db: sqlite3.Connection,
    embedder: Embedding,
    batch: int = 8,
    go_on: Callable[[], bool] = lambda: True,
    clock: Callable[[], int] = now_ms,
    holding: Callable[[frozenset[tuple[str, str]]], None] = lambda _: None,
) -> int:
    """Embed up to ``batch`` settled window items whose text has no vectors yet.

    Items not reached because ``go_on`` said no are queued again. Returns how
    many were taken off the queue. ``holding`` hears the (root, id) of the items taken
    before the take commits, and an empty set once they are stored or queued again: off
    the queue and without vectors meanwhile, they still wait (``status`` counts them).
    """

    def take() -> list[vectors.Pending]:
        taken = window_queue.take_window(db, clock(), batch)
        holding(frozenset((item.root, item.id) for item in taken))
        return taken

    try:
        return _embed_window(db, embedder, _transaction(db, take), go_on)  # type: ignore[arg-type]
    finally:
        holding(frozenset())


def _embed_window(
    db: sqlite3.Connection,
    embedder: Embedding,
    taken: list[vectors.Pending],
    go_on: Callable[[], bool],
) -> int:
    model = embedder.model_id
    done: list[tuple[vectors.Pending, bytes, list[bytes]]] = []
    stopped: list[tuple[str, str, bytes]] = []
    for item in taken:
        made_from = vectors.digest(item.content[: vectors.PREFIX_CHARS])
        if vectors.window_vectors(db, item, model, made_from):
            continue  # its text went back to what the vectors were made from
        if stopped or (done and not go_on()):
            stopped.append((item.root, item.id, made_from))
            continue
        packed = vector_index.pack(embed_item(embedder, item.content, item.metadata))
        done.append((item, made_from, packed))

    def save() -> None:
        for item, made_from, packed in done:
            # Evicted meanwhile: the archive queue has it and embeds it there.
            if db.execute(
                "SELECT 1 FROM items WHERE root = ? AND id = ?", (item.root, item.id)
            ).fetchone():
                vectors.store_window(db, item, model, made_from, packed)
        db.executemany(  # due already (seen at 0): taken first at the next idle turn
            "INSERT OR IGNORE INTO semantic_window_queue (root, id, digest, seen_at) "
            "VALUES (?, ?, ?, 0)",
            stopped,
        )

    if done or stopped:
        _transaction(db, save)
    return len(taken)
