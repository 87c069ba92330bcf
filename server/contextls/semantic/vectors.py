"""The vector side table: float32 BLOBs in the store's SQLite file, searched with numpy.

Each row is one chunk of one item, with the model id that made it; a vector
of another model is stale and is re-embedded. Claims with a lease make two
processes sharing the file never embed the same item twice: an item is
claimed in a write transaction before it is embedded, and a claim whose
lease ran out (its process died) can be taken over.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

LEASE_MS: Final = 60_000

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS semantic_vectors (
    rowid INTEGER PRIMARY KEY,
    root TEXT NOT NULL,
    id TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    model TEXT NOT NULL,
    vector BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS semantic_vectors_key
    ON semantic_vectors (root, id, chunk);
-- Counting a root's vectors must not read their BLOBs (100k rows = 150 MB).
CREATE INDEX IF NOT EXISTS semantic_vectors_by_model ON semantic_vectors (root, model);
CREATE TABLE IF NOT EXISTS semantic_claims (
    root TEXT NOT NULL,
    id TEXT NOT NULL,
    owner TEXT NOT NULL,
    until INTEGER NOT NULL,
    PRIMARY KEY (root, id)
) WITHOUT ROWID;
"""

# Items to embed: in the archive or the window, with no vector of this model.
_PENDING_SQL: Final = """
SELECT root, id, content FROM (
    SELECT root, id, content FROM archive
    UNION ALL
    SELECT root, id, content FROM items
) AS candidate
WHERE NOT EXISTS (
    SELECT 1 FROM semantic_vectors AS v
    WHERE v.root = candidate.root AND v.id = candidate.id AND v.model = ?
)
"""


@dataclass(frozen=True)
class Pending:
    root: str
    id: str
    content: str


def create(db: sqlite3.Connection) -> None:
    db.executescript(SCHEMA)


def pending_count(db: sqlite3.Connection, model: str, root: str | None = None) -> int:
    sql = "SELECT COUNT(*) FROM (" + _PENDING_SQL + ")"
    params: list[str] = [model]
    if root is not None:
        sql += " WHERE root = ?"
        params.append(root)
    return int(db.execute(sql, params).fetchone()[0])


def indexed_count(db: sqlite3.Connection, model: str, root: str | None = None) -> int:
    sql = "SELECT COUNT(DISTINCT root || char(0) || id) FROM semantic_vectors WHERE model = ?"
    params: list[str] = [model]
    if root is not None:
        sql += " AND root = ?"
        params.append(root)
    return int(db.execute(sql, params).fetchone()[0])


def claim(db: sqlite3.Connection, model: str, owner: str, now_ms: int, limit: int) -> list[Pending]:
    """Claim up to ``limit`` unembedded items for ``owner``; the caller commits.

    Must run inside a write transaction (``BEGIN IMMEDIATE``), so two processes
    see each other's claims.
    """
    rows = db.execute(
        _PENDING_SQL + " AND NOT EXISTS (SELECT 1 FROM semantic_claims AS c "
        "WHERE c.root = candidate.root AND c.id = candidate.id AND c.until > ?) "
        "LIMIT ?",
        (model, now_ms, limit),
    ).fetchall()
    db.executemany(
        "INSERT OR REPLACE INTO semantic_claims (root, id, owner, until) VALUES (?, ?, ?, ?)",
        [(root, item_id, owner, now_ms + LEASE_MS) for root, item_id, _ in rows],
    )
    return [Pending(root, item_id, content) for root, item_id, content in rows]


def store(
    db: sqlite3.Connection,
    root: str,
    item_id: str,
    model: str,
    vectors: npt.NDArray[np.float32],
) -> None:
    """Replace the item's vectors (one per chunk) and drop its claim; the caller commits."""
    db.execute("DELETE FROM semantic_vectors WHERE root = ? AND id = ?", (root, item_id))
    db.executemany(
        "INSERT INTO semantic_vectors (root, id, chunk, model, vector) VALUES (?, ?, ?, ?, ?)",
        [(root, item_id, n, model, row.astype("<f4").tobytes()) for n, row in enumerate(vectors)],
    )
    db.execute("DELETE FROM semantic_claims WHERE root = ? AND id = ?", (root, item_id))


class VectorIndex:
    """An in-memory matrix of one root's vectors, refreshed by new rowids.

    Rows are read once; later refreshes read only rows added since. When a
    row was replaced (a re-embed), the whole matrix is reloaded.
    """

    def __init__(self, root: str, model: str) -> None:
        self.root = root
        self.model = model
        self._reset()

    def _reset(self) -> None:
        import numpy as np

        self._last_rowid = 0
        self._seen_top = -1
        self._count = 0
        self._ids: list[str] = []
        self._matrix = np.zeros((0, 384), dtype=np.float32)

    def refresh(self, db: sqlite3.Connection) -> None:
        import numpy as np

        # MAX(rowid) is one B-tree step; the count (an index scan) runs only
        # when rows were added or replaced since the last refresh.
        top = db.execute("SELECT COALESCE(MAX(rowid), 0) FROM semantic_vectors").fetchone()[0]
        if top == self._seen_top:
            return
        self._seen_top = top
        total = db.execute(
            "SELECT COUNT(*) FROM semantic_vectors WHERE root = ? AND model = ?",
            (self.root, self.model),
        ).fetchone()[0]
        added = db.execute(
            "SELECT COUNT(*) FROM semantic_vectors WHERE root = ? AND model = ? AND rowid > ?",
            (self.root, self.model, self._last_rowid),
        ).fetchone()[0]
        if self._count + added != total:  # rows were deleted or replaced: reload
            self._reset()
            self._seen_top = top
            added = total
        if not added:
            return
        # Fill a preallocated matrix in pages, so peak memory stays near its size.
        matrix = np.empty((self._count + added, 384), dtype=np.float32)
        matrix[: self._count] = self._matrix
        row_at = self._count
        cursor = db.execute(
            "SELECT rowid, id, vector FROM semantic_vectors "
            "WHERE root = ? AND model = ? AND rowid > ? ORDER BY rowid",
            (self.root, self.model, self._last_rowid),
        )
        while page := cursor.fetchmany(4096):
            for rowid, item_id, blob in page:
                if row_at == len(matrix):
                    self._seen_top = -1  # rows committed after the count: next refresh
                    break
                matrix[row_at] = np.frombuffer(blob, dtype="<f4")
                self._ids.append(item_id)
                self._last_rowid = rowid
                row_at += 1
        self._matrix = matrix[:row_at]
        self._count = row_at

    def __len__(self) -> int:
        return self._count

    def top(self, query: npt.NDArray[np.float32], limit: int) -> list[tuple[str, float]]:
        """Best items by cosine similarity; an item scores as its best chunk."""
        import numpy as np

        if not self._count or limit <= 0:
            return []
        scores = self._matrix @ query.astype(np.float32)
        # Over-fetch chunks so that several chunks of one item do not crowd others out.
        want = min(self._count, limit * 4)
        if want < self._count:
            picked = np.argpartition(-scores, want - 1)[:want]
        else:
            picked = np.arange(self._count)
        picked = picked[np.argsort(-scores[picked])]
        best: dict[str, float] = {}
        for index in picked:
            item_id = self._ids[int(index)]
            if item_id not in best:
                best[item_id] = float(scores[index])
                if len(best) == limit:
                    break
        return list(best.items())
