"""Score keyword, semantic and hybrid retrieval on the relevance set (recall@3, MRR).

Keyword is the store's own FTS5 bm25 search over a real temporary database;
semantic is the vector table filled by the real background indexer; hybrid
fuses the two with ``contextls.semantic.fusion``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from contextls.core.items import Item
from contextls.semantic import fusion, indexer, vectors
from contextls.semantic.model import Embedder
from contextls.store import Store

from .corpus import QUERIES, documents

ROOT = "file:///relevance"
CANDIDATES = 20


@dataclass(frozen=True)
class Scores:
    recall_at_3: float
    mrr: float


class Bench:
    """The relevance set archived into ``directory``/store.db, embedded once."""

    def __init__(self, directory: Path, embedder: Embedder) -> None:
        self.embedder = embedder
        self.store = Store(directory / "store.db")
        docs = documents()
        self.key_of = {f"ctx-{n}": doc.key for n, doc in enumerate(docs, 1)}
        items = [
            Item(
                id=f"ctx-{n}",
                kind="code",
                content=doc.content,
                metadata={"path": doc.path, "symbol": doc.symbol, "language": "python"},
                timestamp=n,
                tokens=max(1, len(doc.content) // 4),
                encoding="o200k_base",
            )
            for n, doc in enumerate(docs, 1)
        ]
        with self.store.write():
            self.store.archive(ROOT, items, "evicted", 0)
        self.db = sqlite3.connect(directory / "store.db", isolation_level=None)
        vectors.create(self.db)
        while indexer.index_some(self.db, embedder, batch=32):
            pass
        self.index = vectors.VectorIndex(ROOT, embedder.model_id)
        self.index.refresh(self.db)

    def close(self) -> None:
        self.db.close()
        self.store.close()

    def keyword(self, query: str, limit: int) -> list[tuple[str, float]]:
        return [(hit.item.id, hit.score) for hit in self.store.search(ROOT, query, limit)]

    def semantic(self, query: str, limit: int) -> list[tuple[str, float]]:
        return self.index.top(self.embedder.embed([query])[0], limit)

    def hybrid(self, query: str, limit: int, weight: float = fusion.KEYWORD_WEIGHT) -> list[str]:
        fused = fusion.fuse(
            self.keyword(query, CANDIDATES), self.semantic(query, CANDIDATES), limit, weight
        )
        return [hit.id for hit in fused]

    def score(self, rank: Callable[[str], Sequence[str]]) -> Scores:
        found_in_3 = 0
        reciprocal = 0.0
        for query, wanted in QUERIES:
            keys = [self.key_of[item_id] for item_id in rank(query)]
            if wanted in keys[:3]:
                found_in_3 += 1
            if wanted in keys:
                reciprocal += 1 / (keys.index(wanted) + 1)
        return Scores(found_in_3 / len(QUERIES), reciprocal / len(QUERIES))

    def all_modes(self, weight: float = fusion.KEYWORD_WEIGHT) -> dict[str, Scores]:
        return {
            "keyword": self.score(lambda q: [i for i, _ in self.keyword(q, 10)]),
            "semantic": self.score(lambda q: [i for i, _ in self.semantic(q, 10)]),
            "hybrid": self.score(lambda q: self.hybrid(q, 10, weight)),
        }


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        bench = Bench(Path(directory), Embedder())
        for weight in (0.0, 0.05, 0.1, 0.15, 0.25, 0.4, 0.6, 1.0):
            print(weight, bench.all_modes(weight))
        bench.close()
