"""Seed 003's relevance score, used by the ``relevance`` eviction policy.

score = 0.3 * recency + importance(kind) + source bias(kind), capped at 1.0,
where recency decays exponentially with a 24-hour time constant. The lowest
score goes first; ties go to the oldest. Pinned items never take part.
The seed's free-form flags and source types map onto item kinds as below.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Final

from contextls.core.items import Item

_HOUR_MS: Final = 3_600_000
_RECENCY_WEIGHT: Final = 0.3
_DECAY_HOURS: Final = 24.0

# Seed 003 flags: error 0.6, code 0.4; source bias: user 0.3, assistant 0.2,
# error 0.4, file 0.1. Marked text is the user's words; REPL output is closest
# to the assistant's; code regions and files are "file" sources flagged "code".
_KIND_WEIGHT: Final[dict[str, float]] = {
    "error": 0.6 + 0.4,
    "code": 0.4 + 0.1,
    "file": 0.4 + 0.1,
    "text": 0.3,
    "repl-history": 0.2,
    "custom": 0.0,
}


def relevance(item: Item, now_ms: int) -> float:
    age_hours = max(0, now_ms - item.timestamp) / _HOUR_MS
    recency = math.exp(-age_hours / _DECAY_HOURS)
    return min(1.0, _RECENCY_WEIGHT * recency + _KIND_WEIGHT.get(item.kind, 0.0))


def next_victim(unpinned: Iterable[Item], policy: str, now: Callable[[], int]) -> Item | None:
    """The item to evict first among ``unpinned`` (oldest first): the oldest under
    ``fifo``; the least relevant under ``relevance``, ties to the oldest."""
    if policy == "fifo":
        return next(iter(unpinned), None)
    at = now()
    best: Item | None = None
    best_score = 2.0
    for item in unpinned:
        score = relevance(item, at)
        if score < best_score:
            best, best_score = item, score
    return best
