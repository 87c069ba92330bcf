"""A query's nearest vectors in the archive's terms: which of them are archived items
of the kinds asked for, and the cosines of items asked about by id."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from contextls.search.meaning import Nearest
from contextls.semantic.vectors import ROW_BYTES

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from contextls.semantic.model import Embedding
    from contextls.semantic.scan import Scanner
    from contextls.semantic.vector_index import VectorIndex


def nearest(
    db: sqlite3.Connection,
    scanner: Scanner,
    index: VectorIndex,
    embedder: Embedding,
    query: str,
    limit: int,
    kinds: Sequence[str] | None,
    asked: Sequence[str],
) -> Nearest:
    """The ``limit`` archived items nearest to ``query`` (of ``kinds``), the number of
    vectors scored, and the cosines of the items ``asked`` about."""
    index.refresh(db)
    vector = embedder.embed([query])[0]
    hits = archived(db, index.root, index.search(scanner, vector, limit * 2), kinds)
    cosines = _cosines(db, index.root, embedder.model_id, vector, asked)
    return Nearest(hits[:limit], len(index), cosines)


def archived(
    db: sqlite3.Connection,
    root: str,
    nearest: list[tuple[str, float]],
    kinds: Sequence[str] | None,
) -> list[tuple[str, float]]:
    """``nearest`` without items that left the archive since, or are of other kinds."""
    if not nearest:
        return []
    marks = ", ".join("?" * len(nearest))
    sql = f"SELECT id FROM archive WHERE root = ? AND id IN ({marks})"
    params: list[str] = [root, *(item_id for item_id, _ in nearest)]
    if kinds:
        sql += f" AND kind IN ({', '.join('?' * len(kinds))})"
        params.extend(kinds)
    kept = {row[0] for row in db.execute(sql, params)}
    return [(item_id, score) for item_id, score in nearest if item_id in kept]


def _cosines(
    db: sqlite3.Connection,
    root: str,
    model: str,
    query: npt.NDArray[np.float32],
    ids: Sequence[str],
) -> dict[str, float]:
    """The cosine of each of ``ids`` that has vectors (its best chunk), read from the
    table: a few rows, so no need to find them in the index."""
    if not ids:
        return {}
    import numpy as np

    from contextls.semantic.vector_index import unpack

    marks = ", ".join("?" * len(ids))
    rows = db.execute(
        f"SELECT id, vector FROM semantic_vectors WHERE root = ? AND model = ? AND id IN ({marks})",
        (root, model, *ids),
    ).fetchall()
    rows = [(item_id, blob) for item_id, blob in rows if len(blob) == ROW_BYTES]
    if not rows:
        return {}
    quantized, unscale = unpack([blob for _, blob in rows])
    dots = (quantized.astype(np.float32) - 128.0) @ query * unscale
    best: dict[str, float] = {}
    for (item_id, _), score in zip(rows, dots.tolist(), strict=True):
        best[item_id] = max(score, best.get(item_id, -1.0))
    return best
