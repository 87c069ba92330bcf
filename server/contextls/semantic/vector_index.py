"""Stored vectors as the index holds them, and one root's index in memory."""

from __future__ import annotations

import sqlite3
from array import array
from typing import TYPE_CHECKING

from contextls.semantic.model import DIMENSIONS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

from contextls.semantic.vectors import ROW_BYTES


def pack(matrix: npt.NDArray[np.float32]) -> list[bytes]:
    """Unit rows → one stored vector each: uint8 row, then its float32 factor."""
    import numpy as np

    from contextls.semantic.scan import quantize_rows

    quantized, unscale = quantize_rows(np.asarray(matrix, dtype=np.float32))
    factors = unscale.astype("<f4")
    return [
        row.tobytes() + factor.tobytes() for row, factor in zip(quantized, factors, strict=True)
    ]


def unpack(
    blobs: list[bytes],
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32]]:
    """Stored vectors → (uint8 rows, factors), as ``scan.Scanner.scores`` takes them."""
    import numpy as np

    block = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(-1, ROW_BYTES)
    factors = block[:, DIMENSIONS:].copy().view("<f4").reshape(-1)
    return block[:, :DIMENSIONS], factors.astype(np.float32)


class VectorIndex:
    """One root's vectors in memory, as int8 rows (``scan``), refreshed incrementally.

    Rows are read once: a refresh reads only rows added since (by rowid) and
    drops the rows of items logged in ``semantic_gone``. The int8 buffer grows
    by half when full, so appending is amortised and a search never copies it.
    """

    def __init__(self, root: str, model: str) -> None:
        self.root = root
        self.model = model
        self._reset()

    def _reset(self) -> None:
        import numpy as np

        self._last_rowid = 0
        self._gone_seq = -1
        self._count = 0
        self._rows = np.empty((0, DIMENSIONS), dtype=np.uint8)
        self._unscale = np.empty(0, dtype=np.float32)
        self._owner = array("q")  # row -> index into self._ids
        self._ids: list[str] = []
        self._slot: dict[str, int] = {}
        self._items = 0

    def __len__(self) -> int:
        return self._count

    @property
    def items(self) -> int:
        """Items with at least one live row."""
        return self._items

    @property
    def nbytes(self) -> int:
        return int(self._rows.nbytes + self._unscale.nbytes)

    def refresh(self, db: sqlite3.Connection) -> None:
        top, gone = db.execute(
            "SELECT (SELECT max(rowid) FROM semantic_vectors), (SELECT max(seq) FROM semantic_gone)"
        ).fetchone()
        top, gone = top or 0, gone or 0
        if gone != self._gone_seq:
            self._forget(db, gone)
        if top > self._last_rowid:
            self._append(db)

    def _forget(self, db: sqlite3.Connection, gone: int) -> None:
        if self._gone_seq < 0:
            self._gone_seq = gone  # a fresh index: what it reads is current
            return
        first = db.execute("SELECT min(seq) FROM semantic_gone").fetchone()[0] or 0
        if first > self._gone_seq + 1:  # fell behind the trimmed log: read it all again
            self._reset()
            self._gone_seq = gone
            return
        rows = db.execute(
            "SELECT DISTINCT id FROM semantic_gone WHERE seq > ? AND root = ?",
            (self._gone_seq, self.root),
        ).fetchall()
        self._gone_seq = gone
        dropped = {self._slot.pop(item_id) for (item_id,) in rows if item_id in self._slot}
        if not dropped:
            return
        import numpy as np

        owner = np.frombuffer(self._owner, dtype=np.int64)
        mask = np.isin(owner, np.fromiter(dropped, dtype=np.int64))
        self._unscale[: self._count][mask] = 0.0  # their rows score 0 until compacted
        for slot in dropped:
            self._ids[slot] = ""
        self._items -= len(dropped)

    def _append(self, db: sqlite3.Connection) -> None:
        cursor = db.execute(
            "SELECT rowid, id, vector FROM semantic_vectors "
            "WHERE rowid > ? AND root = ? AND model = ? ORDER BY rowid",
            (self._last_rowid, self.root, self.model),
        )
        while page := cursor.fetchmany(4096):
            blobs = [blob for _, _, blob in page if len(blob) == ROW_BYTES]
            if len(blobs) != len(page):
                page = [row for row in page if len(row[2]) == ROW_BYTES]
            if not page:
                continue
            quantized, unscale = unpack(blobs)
            self._grow(len(page))
            end = self._count + len(page)
            self._rows[self._count : end] = quantized
            self._unscale[self._count : end] = unscale
            for _, item_id, _ in page:
                slot = self._slot.get(item_id)
                if slot is None:
                    slot = self._slot[item_id] = len(self._ids)
                    self._ids.append(item_id)
                    self._items += 1
                self._owner.append(slot)
            self._count = end
            self._last_rowid = page[-1][0]
        if len(self._rows) > self._count * 5 // 4 + 4096:  # a bulk load: give back the slack
            self._rows = self._rows[: self._count + 1024].copy()
            self._unscale = self._unscale[: self._count + 1024].copy()
        top = db.execute("SELECT max(rowid) FROM semantic_vectors").fetchone()[0] or 0
        self._last_rowid = max(self._last_rowid, top)  # other roots' rows: never again

    def _grow(self, more: int) -> None:
        import numpy as np

        need = self._count + more
        if need <= len(self._rows):
            return
        capacity = max(need, len(self._rows) * 3 // 2, 1024)
        rows = np.empty((capacity, DIMENSIONS), dtype=np.uint8)
        rows[: self._count] = self._rows[: self._count]
        unscale = np.zeros(capacity, dtype=np.float32)
        unscale[: self._count] = self._unscale[: self._count]
        self._rows, self._unscale = rows, unscale

    def top(self, scores: npt.NDArray[np.float32], limit: int) -> list[tuple[str, float]]:
        """Best items by cosine similarity; an item scores as its best chunk."""
        import numpy as np

        if not self._count or limit <= 0:
            return []
        # Over-fetch chunks so that several chunks of one item do not crowd others out.
        want = min(self._count, limit * 4)
        if want < self._count:
            picked = np.argpartition(scores, self._count - want)[self._count - want :]
        else:
            picked = np.arange(self._count)
        picked = picked[np.argsort(-scores[picked], kind="stable")]
        best: dict[str, float] = {}
        for index in picked.tolist():
            item_id = self._ids[self._owner[index]]
            if item_id and item_id not in best:
                best[item_id] = float(scores[index])
                if len(best) == limit:
                    break
        return list(best.items())

    def search(
        self, scanner: object, query: npt.NDArray[np.float32], limit: int
    ) -> list[tuple[str, float]]:
        if not self._count:
            return []
        from contextls.semantic.scan import Scanner

        assert isinstance(scanner, Scanner)
        scores = scanner.scores(self._rows[: self._count], self._unscale[: self._count], query)
        return self.top(scores, limit)
