"""Hybrid ranking: fuse keyword (bm25) and semantic (cosine) hits by score.

Measured on the relevance set in tests/ (see tests/bench/README.md): naive
reciprocal-rank fusion lost to semantic alone, because it gives a weak
keyword hit as much pull as a strong cosine. Here the cosine ranks, and a
keyword hit adds a bonus proportional to its bm25 relative to the best
keyword hit, so an exact identifier or error message still wins while
paraphrases keep their semantic order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

KEYWORD_WEIGHT: Final = 0.25


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
) -> list[Fused]:
    """Rank the union of both hit lists; each list is (id, score), higher is better."""
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
        # A keyword-only hit ranks as if its cosine were the lowest one seen.
        scores[item_id] = scores.get(item_id, floor) + bonus
        modes.setdefault(item_id, []).append("keyword")
    ranked = sorted(scores, key=lambda item_id: (-scores[item_id], item_id))[:limit]
    return [Fused(item_id, scores[item_id], tuple(modes[item_id])) for item_id in ranked]
