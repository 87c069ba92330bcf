"""One semantic engine per store file: the model, a connection, per-root vector indexes.

The model loads lazily (first search or idle indexing), so a server that
never searches never pays for it. When the extra is missing, or the model
file is missing or corrupt, the engine is unavailable and says why; callers
then fall back to keyword search.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from pathlib import Path
from typing import Final

from . import availability, indexer, vectors
from .model import MODEL_ID, Embedder, ModelError

log = logging.getLogger(__name__)

MEMORY: Final = ":memory:"
AUTO_RETRIEVE_THRESHOLD: Final = 0.15
"""Cosine floor for bringing an archived item back (MiniLM gives code-vs-question
pairs low absolute cosines: ~0.19 for a right answer here, ~0.1 for noise)."""
AUTO_RETRIEVE_RELATIVE: Final = 0.8
"""...and it must score at least this share of the best hit's cosine."""
MODEL_ENV: Final = "CONTEXTLS_SEMANTIC_MODEL"
"""A model.onnx path to use instead of the installed one (it must still match the sha256)."""
DISABLE_ENV: Final = "CONTEXTLS_SEMANTIC"
"""Set to ``off`` to run keyword-only even when the extra is installed."""

_engines: dict[str, Engine] = {}
_lock = threading.Lock()


def engine_for(location: str) -> Engine:
    with _lock:
        engine = _engines.get(location)
        if engine is None:
            engine = _engines[location] = Engine(location)
        return engine


class Engine:
    def __init__(self, location: str) -> None:
        self.location = location
        self._embedder: Embedder | None = None
        self._reason: str | None = None
        self._db: sqlite3.Connection | None = None
        self._indexes: dict[str, vectors.VectorIndex] = {}

    # ------------------------------------------------------------ availability

    def _ready(self) -> Embedder | None:
        if self._embedder is not None:
            return self._embedder
        if self._reason is not None:
            return None
        self._reason = self._why_not()
        if self._reason:
            log.warning("semantic search unavailable: %s", self._reason)
            return None
        return self._embedder

    def _why_not(self) -> str:
        if os.environ.get(DISABLE_ENV, "").lower() == "off":
            return f"turned off by {DISABLE_ENV}=off"
        if self.location == MEMORY:
            return "the store is in memory; vectors need a database file"
        found = availability.check()
        if not found.available:
            return found.reason
        override = os.environ.get(MODEL_ENV)
        try:
            self._embedder = Embedder(Path(override) if override else None)
        except ModelError as error:
            return str(error)
        db = sqlite3.connect(self.location, isolation_level=None, check_same_thread=False)
        # Short: the idle indexer must never hold up the event loop behind another writer.
        db.execute("PRAGMA busy_timeout = 50")
        self._db = db  # the store created the tables; this connection only reads and embeds
        return ""

    @property
    def available(self) -> bool:
        return self._ready() is not None

    @property
    def reason(self) -> str:
        self._ready()
        return self._reason or ""

    def status(self, root: str) -> dict[str, object]:
        embedder = self._ready()
        if embedder is None or self._db is None:
            return {"available": False, "model": MODEL_ID, "reason": self.reason}
        return {
            "available": True,
            "indexed": vectors.indexed_count(self._db, embedder.model_id, root),
            "pending": vectors.pending_count(self._db, embedder.model_id, root),
            "model": embedder.model_id,
            "reason": "",
        }

    # ---------------------------------------------------------------- work

    def index_some(self, batch: int = 2) -> bool | None:
        """Embed a batch: True if more may wait, False if done, None if busy/unavailable."""
        embedder = self._ready()
        if embedder is None or self._db is None:
            return False
        try:
            done = indexer.index_some(self._db, embedder, batch)
        except sqlite3.OperationalError:  # another process holds the write lock
            return None
        return done == batch

    def search(
        self, root: str, query: str, limit: int, kinds: list[str] | None = None
    ) -> list[tuple[str, float]]:
        """Archived items of ``root`` nearest to ``query`` as (id, cosine), best first."""
        embedder = self._ready()
        if embedder is None or self._db is None:
            return []
        index = self._indexes.get(root)
        if index is None:
            index = self._indexes[root] = vectors.VectorIndex(root, embedder.model_id)
        index.refresh(self._db)
        nearest = index.top(embedder.embed([query])[0], limit * 3)
        if not nearest:
            return []
        marks = ", ".join("?" * len(nearest))
        sql = f"SELECT DISTINCT id FROM archive WHERE root = ? AND id IN ({marks})"
        params: list[str] = [root, *(item_id for item_id, _ in nearest)]
        if kinds:
            sql += f" AND kind IN ({', '.join('?' * len(kinds))})"
            params.extend(kinds)
        archived = {row[0] for row in self._db.execute(sql, params)}
        return [(item_id, score) for item_id, score in nearest if item_id in archived][:limit]

    def archive_places(self, root: str, ids: list[str]) -> dict[str, tuple[int, str]]:
        """``archived_at`` and ``reason`` of archived items (latest entry per id)."""
        if not ids or self._db is None:
            return {}
        marks = ", ".join("?" * len(ids))
        rows = self._db.execute(
            f"SELECT id, archived_at, reason FROM archive WHERE root = ? AND id IN ({marks}) "
            "ORDER BY rowid",
            [root, *ids],
        )
        return {row[0]: (row[1], row[2]) for row in rows}
