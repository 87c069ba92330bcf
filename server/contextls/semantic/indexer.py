"""Background embedding: claim a batch, embed it outside any transaction, store it.

Called from the server's idle path, never from an add. Each call does a
bounded amount of work so the server answers the next request quickly.
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import vectors
from .chunks import chunk_ids
from .model import Embedder

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

OWNER = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"


MAX_CHUNKS = 8
"""Chunks embedded per item (~2,000 word pieces): a 1 MB item would otherwise
hold the event loop for seconds. Later text of a huge item is not embedded."""


def embed_item(embedder: Embedder, content: str) -> npt.NDArray[np.float32]:
    """One unit vector per ~256-piece chunk of ``content`` (the first ``MAX_CHUNKS``)."""
    # Tokenise a bounded prefix: 8 chunks never need more than ~64 KB of text.
    return embedder.embed_ids(chunk_ids(embedder.pieces(content[: 64 * 1024]))[:MAX_CHUNKS])


def index_some(
    db: sqlite3.Connection,
    embedder: Embedder,
    batch: int = 16,
    now_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    owner: str = OWNER,
) -> int:
    """Embed up to ``batch`` pending items; returns how many were stored.

    ``db`` must be in autocommit mode (``isolation_level=None``) and not in a
    transaction: claiming and storing each take a short write transaction.
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        claimed = vectors.claim(db, embedder.model_id, owner, now_ms(), batch)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    if not claimed:
        return 0
    embedded = [(item, embed_item(embedder, item.content)) for item in claimed]
    db.execute("BEGIN IMMEDIATE")
    try:
        for item, matrix in embedded:
            vectors.store(db, item.root, item.id, embedder.model_id, matrix)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return len(embedded)
