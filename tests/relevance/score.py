"""Score keyword, semantic and hybrid retrieval on the relevance set (recall@3, MRR).

Everything is the shipped path: the store's FTS5 search over a real temporary
database, the engine's background worker filling the vector table, and
``retrieval.retrieve`` in each mode (hybrid fuses with ``fusion``).

    .venv/bin/python -m tests.relevance.score    # both sets; also sweeps the fusion
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from contextls.core.items import Item
from contextls.search import fusion
from contextls.search.retrieval import retrieve
from contextls.semantic.engine import Engine
from contextls.storage.store import Store

from . import stdlib
from .corpus import QUERIES, Document, documents

ROOT = "file:///relevance"
SETS: dict[str, tuple[Callable[[], list[Document]], list[tuple[str, str]]]] = {
    "own": (documents, QUERIES),
    "stdlib": (stdlib.documents, stdlib.QUERIES),
}
"""The relevance sets: this repository's code (``corpus``), Python's (``stdlib``)."""


@dataclass(frozen=True)
class Scores:
    recall_at_3: float
    mrr: float


class Bench:
    """A relevance set archived into ``directory``/store.db, embedded once."""

    def __init__(self, directory: Path, name: str = "own") -> None:
        self.store = Store(directory / "store.db")
        make_documents, self.queries = SETS[name]
        docs = make_documents()
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
        self.engine = Engine(self.store.location)
        while self.engine.index_some() is not False:
            self.engine.wait()

    def close(self) -> None:
        self.store.close()

    def ranked(self, mode: str) -> Callable[[str], list[str]]:
        def rank(query: str) -> list[str]:
            found = retrieve(self.store, self.engine, ROOT, query, 10, None, mode)
            assert found.mode == mode, found.warning
            return [hit.item.id for hit in found.hits]

        return rank

    def score(self, rank: Callable[[str], Sequence[str]]) -> Scores:
        found_in_3 = 0
        reciprocal = 0.0
        for query, wanted in self.queries:
            keys = [self.key_of[item_id] for item_id in rank(query)]
            if wanted in keys[:3]:
                found_in_3 += 1
            if wanted in keys:
                reciprocal += 1 / (keys.index(wanted) + 1)
        return Scores(found_in_3 / len(self.queries), reciprocal / len(self.queries))

    def all_modes(self) -> dict[str, Scores]:
        return {mode: self.score(self.ranked(mode)) for mode in ("keyword", "semantic", "hybrid")}


if __name__ == "__main__":
    import tempfile

    for name in SETS:
        with tempfile.TemporaryDirectory() as directory:
            bench = Bench(Path(directory), name)
            print(f"== {name}: {len(bench.key_of)} documents, {len(bench.queries)} queries")
            for mode, scores in bench.all_modes().items():
                print(f"{mode:9} recall@3 {scores.recall_at_3:.2f}  MRR {scores.mrr:.2f}")
            defaults = fusion.KEYWORD_WEIGHT, fusion.COVERAGE_POWER
            for weight in (0.0, 0.25, 0.5, 0.7, 1.0):
                for power in (0.0, 1.0, 2.0, 3.0):
                    fusion.KEYWORD_WEIGHT, fusion.COVERAGE_POWER = weight, power  # type: ignore[misc]
                    hybrid = bench.score(bench.ranked("hybrid"))
                    print(
                        f"hybrid weight {weight:.2f} coverage power {power:.0f}: "
                        f"recall@3 {hybrid.recall_at_3:.2f}  MRR {hybrid.mrr:.2f}"
                    )
            fusion.KEYWORD_WEIGHT, fusion.COVERAGE_POWER = defaults  # type: ignore[misc]
            bench.close()
