"""A query's nearest vectors in the archive's terms: which of them are archived items
of the kinds asked for, and the cosines of items asked about by id."""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from contextls.search.meaning import Nearest
from contextls.semantic.vectors import ROW_BYTES

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from contextls.semantic.model import Embedding
    from contextls.semantic.scan import Scanner
    from contextls.semantic.vector_index import VectorIndex


QUERIES_KEPT: Final = 8
"""Query vectors kept: a search embeds its query in a thread ahead, then searches."""


class QueryVectors:
    """The vectors of the last queries searched for, each made once: ahead of its search,
    in a worker thread (the model's process may be embedding a batch of the backlog, and
    the search on the event loop would wait for it, every client with it), or by the
    search itself."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[str, str], npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    def waits(self, embedder: Embedding | None, query: str) -> bool:
        """Whether a search for ``query`` would embed it (a model, and no vector kept)."""
        with self._lock:
            return embedder is not None and (embedder.model_id, query) not in self._kept

    def make(self, embedder: Embedding | None, query: str) -> None:
        """The vector of ``query`` made now and kept, when there is a model."""
        if embedder is not None:
            self.vector(embedder, query)

    def vector(self, embedder: Embedding, query: str) -> npt.NDArray[np.float32]:
        key = (embedder.model_id, query)
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return found
        made: npt.NDArray[np.float32] = embedder.embed([query])[0]
        with self._lock:
            self._kept[key] = made
            while len(self._kept) > QUERIES_KEPT:
                self._kept.popitem(last=False)
        return made


def nearest(
    db: sqlite3.Connection,
    scanner: Scanner,
    index: VectorIndex,
    embedder: Embedding,
    queries: QueryVectors,
    query: str,
    limit: int,
    kinds: Sequence[str] | None,
    asked: Sequence[str],
) -> Nearest:
    """The ``limit`` archived items nearest to ``query`` (of ``kinds``), the number of
    vectors scored, and the cosines of the items ``asked`` about."""
    index.refresh(db)
    vector = queries.vector(embedder, query)
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
