"""Hybrid ranking: the cosine ranks, and the query's words lift the items that hold them.

An item scores ``cosine + WORDS_WEIGHT * share + BM25_WEIGHT * share * bm25 / best
bm25``, where ``share`` is the weighted share of the query's telling words it holds
(``relevance.Words``): an exact identifier or error message still comes first, while a
question in other words, whose words match items by chance, keeps its order by meaning.
Measured on the tuning half of the relevance set (5,046 functions; see
``tests/bench/README.md``), recall@3: semantic 0.44, the earlier fusion (bm25 share
times term coverage) 0.45, this one 0.51; weights 0.2-0.5 and 0.0-0.2 were within 0.02.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

WORDS_WEIGHT: Final = 0.3
BM25_WEIGHT: Final = 0.1


@dataclass(frozen=True)
class Fused:
    id: str
    score: float


def fuse(
    keyword: Sequence[tuple[str, float]],
    semantic: Sequence[tuple[str, float]],
    cosines: Mapping[str, float],
    shares: Mapping[str, float],
) -> list[Fused]:
    """Rank the union of both hit lists, best first; each list is (id, score).

    ``cosines`` holds the cosine of every item that has one (keyword hits too); an
    item without one (not embedded yet) ranks as if it had the lowest cosine seen.
    ``shares``: the weighted share of the query's words each item holds.
    """
    best_bm25 = max((score for _, score in keyword), default=0.0)
    bm25 = dict(keyword)
    lowest = min(cosines.values(), default=0.0)
    scores: dict[str, float] = {}
    for item_id in dict.fromkeys([*(i for i, _ in semantic), *(i for i, _ in keyword)]):
        share = shares.get(item_id, 0.0)
        lift = WORDS_WEIGHT * share
        if item_id in bm25 and best_bm25 > 0:
            lift += BM25_WEIGHT * share * bm25[item_id] / best_bm25
        scores[item_id] = cosines.get(item_id, lowest) + lift
    ranked = sorted(scores, key=lambda item_id: (-scores[item_id], item_id))
    return [Fused(item_id, scores[item_id]) for item_id in ranked]
