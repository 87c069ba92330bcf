"""Hybrid ranking: fuse keyword (bm25) and semantic (cosine) hits by score.

Measured on the relevance sets in tests/relevance/ (see tests/bench/README.md):
naive reciprocal-rank fusion lost to semantic alone, because it gives a weak
keyword hit as much pull as a strong cosine. Here the cosine ranks, and a
keyword hit adds a bonus proportional to its bm25 relative to the best keyword
hit, times the share of the query's words it holds (to the power 1.5): an exact
identifier or error message still wins, while a question in other words, whose
keyword hits share a word or two with it by chance, keeps its semantic order.
Without the share, hybrid lost to semantic on the standard-library set
(recall@3 0.53 vs 0.68); weight 0.5 and power 1.5 were swept on both sets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

KEYWORD_WEIGHT: Final = 0.5
COVERAGE_POWER: Final = 1.5


@dataclass(frozen=True)
class Fused:
    id: str
    score: float
    modes: tuple[str, ...]  # which searches found it: "keyword", "semantic"


def fuse(
    keyword: Sequence[tuple[str, float]],
    semantic: Sequence[tuple[str, float]],
    limit: int,
    keyword_weight: float = KEYWORD_WEIGHT,
    coverage: Mapping[str, float] | None = None,
) -> list[Fused]:
    """Rank the union of both hit lists; each list is (id, score), higher is better.

    ``coverage`` (0..1 per keyword hit): the share of the query's words the item
    holds. The bonus shrinks with it, so a hit on one common word of a question
    written in other words does not outrank what the question means.
    """
    best_keyword = max((score for _, score in keyword), default=0.0)
    cosine = dict(semantic)
    floor = min(cosine.values(), default=0.0)
    scores: dict[str, float] = {}
    modes: dict[str, list[str]] = {}
    for item_id, score in semantic:
        scores[item_id] = score
        modes[item_id] = ["semantic"]
    for item_id, score in keyword:
        bonus = keyword_weight * (score / best_keyword if best_keyword > 0 else 1.0)
        if coverage is not None:
            bonus *= coverage.get(item_id, 1.0) ** COVERAGE_POWER
        # A keyword-only hit ranks as if its cosine were the lowest one seen.
        scores[item_id] = scores.get(item_id, floor) + bonus
        modes.setdefault(item_id, []).append("keyword")
    ranked = sorted(scores, key=lambda item_id: (-scores[item_id], item_id))[:limit]
    return [Fused(item_id, scores[item_id], tuple(modes[item_id])) for item_id in ranked]
