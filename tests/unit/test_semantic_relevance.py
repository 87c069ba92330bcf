"""The relevance set: hybrid must be at least as good as keyword and semantic alone.

Runs the real model (the ``contextls[semantic]`` extra, installed by ``make
setup``), the store's real FTS5 search and the real background indexer.
Measured here (46 queries, 315 functions): keyword recall@3 0.89 / MRR 0.85,
semantic 0.80 / 0.78, hybrid 0.96 / 0.85.
"""

from pathlib import Path

from tests.relevance.corpus import QUERIES, documents
from tests.relevance.score import Bench


def test_the_set_is_big_enough() -> None:
    assert len(QUERIES) >= 40
    assert len(documents()) >= 200


def test_hybrid_is_at_least_as_good_as_either_mode(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    try:
        scores = bench.all_modes()
    finally:
        bench.close()
    keyword, semantic, hybrid = scores["keyword"], scores["semantic"], scores["hybrid"]
    assert semantic.recall_at_3 >= 0.7, scores
    assert hybrid.recall_at_3 >= max(keyword.recall_at_3, semantic.recall_at_3), scores
    assert hybrid.mrr >= max(keyword.mrr, semantic.mrr), scores
    assert hybrid.recall_at_3 >= 0.9, scores
