"""A budget that adapts to the work (seed 003's ``AdaptiveWindowManager``).

Under the ``adaptive`` policy the window's token budget is not ``maxTokens`` but a
budget that follows how demanding the recent items are. Everything here is pure:
the workspace asks for the next budget after each change and applies it.

**Complexity** (0..1) is read off the last ``RECENT`` items of the window. Each item
may show any of five signs, mapped from the seed's indicators onto contextls items:

=====================  =======================================================
sign                   an item shows it when
=====================  =======================================================
a code block           it is ``code`` or ``file``, or its text holds a fence (```)
an error               it is an ``error`` item, or its text names one
                       (error, exception, traceback, failed)
a long item            its text is over 500 characters
technical terms        its text holds one (algorithm, implementation,
                       architecture, database, api)
a question             it is a note (``text`` or ``custom``) holding a ``?``
=====================  =======================================================

The score is the signs found over twice the items looked at (the seed counts two
signs an item as the most it expects), capped at 1. Questions count in notes only:
code is full of ``?`` that ask nothing.

**The target** is ``base × task multiplier × (0.5 + 2.5 × complexity)``, kept
between half and four times the base, and under ``ceiling`` (the model's context
size minus room for the answer; 0: four times the base). The multipliers:

====================  ==========
task                  multiplier
====================  ==========
``general``           1.0
``coding``            1.5
``debugging``         2.0
``research``          1.3
``complex_analysis``  2.5
====================  ==========

**A step** moves the current budget toward the target by at most a quarter of the
base, so the size never jumps, and never below what the pinned items take.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from contextls.core.items import Item
from contextls.core.window import Eviction, Limits, Window
from contextls.protocol import WindowSettings

RECENT: Final = 10
"""Items the complexity is read from: the most recent ones."""
LONG_CHARACTERS: Final = 500
ERROR_WORDS: Final = ("error", "exception", "traceback", "failed")
TECHNICAL_TERMS: Final = ("algorithm", "implementation", "architecture", "database", "api")
SIGNS_PER_ITEM: Final = 2
"""What the seed expects of an item at most: the score's denominator, per item."""
TASK_MULTIPLIERS: Final[dict[str, float]] = {
    "general": 1.0,
    "coding": 1.5,
    "debugging": 2.0,
    "research": 1.3,
    "complex_analysis": 2.5,
}
MIN_SHARE: Final = 0.5
MAX_SHARE: Final = 4
STEP_SHARE: Final = 0.25


def signs(item: Item) -> int:
    """How many of the five signs of demanding work ``item`` shows (counted once: every
    status reads the ten newest items)."""
    if item.demand < 0:
        item.demand = signs_of(item.kind, item.content)
    return item.demand


REMEMBERED_FROM: Final = 64 * 1024
"""A text this long has its signs counted once (~10 ms for 600 KB): the add of a large
text counts them in a worker thread first, and the add on the event loop finds them."""


def signs_of(kind: str, text: str) -> int:
    """How many of the five signs of demanding work a ``kind`` item of ``text`` shows."""
    if len(text) >= REMEMBERED_FROM:
        return _remembered_signs(kind, text)
    return _count_signs(kind, text)


@functools.lru_cache(maxsize=8)
def _remembered_signs(kind: str, text: str) -> int:
    return _count_signs(kind, text)


def _count_signs(kind: str, text: str) -> int:
    lower = text.lower()
    return (
        (kind in ("code", "file") or "```" in text)
        + (kind == "error" or any(word in lower for word in ERROR_WORDS))
        + (len(text) > LONG_CHARACTERS)
        + any(term in lower for term in TECHNICAL_TERMS)
        + (kind in ("text", "custom") and "?" in text)
    )


def complexity(items: Sequence[Item]) -> float:
    """How demanding the recent items are, 0..1 (the window's last ``RECENT``)."""
    recent = items[-RECENT:]
    if not recent:
        return 0.0
    return min(sum(signs(item) for item in recent) / (len(recent) * SIGNS_PER_ITEM), 1.0)


@dataclass(frozen=True, slots=True)
class Bounds:
    low: int
    high: int


def bounds(base: int, ceiling: int, pinned: int = 0) -> Bounds:
    """Where the budget may be: half to four times the base, under the ceiling, and
    never below what the pinned items take. A ceiling below half the base wins over that
    floor (it is the model's limit; setting one is refused, but a window may hold one
    from before): the budget then stays at the ceiling."""
    high = base * MAX_SHARE
    if ceiling:
        high = min(high, ceiling)
    low = max(min(int(base * MIN_SHARE), high), pinned)
    return Bounds(low, max(high, low))


def grow_to(settings: WindowSettings) -> int:
    """The most the budget may grow to take one item (0 under a fixed budget)."""
    if settings.budget_policy != "adaptive":
        return 0
    return bounds(settings.max_tokens, settings.budget_ceiling).high


def ceiling_problem(settings: WindowSettings) -> str | None:
    """Why ``budgetCeiling`` cannot be what it is with this ``maxTokens``, or None."""
    ceiling, base = settings.budget_ceiling, settings.max_tokens
    floor = int(base * MIN_SHARE)
    if ceiling and ceiling < floor:
        return (
            f"budgetCeiling {ceiling:,} is below the adaptive budget's floor, half of maxTokens "
            f"{base:,} ({floor:,}): raise budgetCeiling, or lower maxTokens to "
            f"{ceiling * 2:,} or less"
        )
    return None


def target(base: int, task: str, score: float, ceiling: int = 0) -> int:
    """The budget the work calls for: ``base × multiplier × (0.5 + 2.5 × complexity)``."""
    wanted = int(base * TASK_MULTIPLIERS.get(task, 1.0) * (0.5 + 2.5 * score))
    limits = bounds(base, ceiling)
    return max(limits.low, min(wanted, limits.high))


def next_budget(
    current: int, base: int, task: str, score: float, ceiling: int = 0, pinned: int = 0
) -> int:
    """One step from ``current`` toward the target: at most a quarter of the base."""
    goal = target(base, task, score, ceiling)
    most = max(int(base * STEP_SHARE), 1)
    stepped = current + max(-most, min(goal - current, most))
    limits = bounds(base, ceiling, pinned)
    return max(limits.low, min(stepped, limits.high))


def budget_of(settings: WindowSettings, reached: int, pinned: int = 0) -> int:
    """The budget a window with ``settings`` has: ``maxTokens`` under ``fixed``; under
    ``adaptive`` the one it ``reached`` (0: none yet, the base), within its bounds."""
    base = settings.max_tokens
    if settings.budget_policy != "adaptive":
        return base
    limits = bounds(base, settings.budget_ceiling, pinned)
    return max(limits.low, min(reached or base, limits.high))


def limits_of(settings: WindowSettings, budget: int) -> Limits:
    """The window's limits with ``budget`` as its token budget."""
    return Limits(
        settings.max_items, budget, settings.eviction_policy, settings.render_order == "stable"
    )


def configured(before: WindowSettings, after: WindowSettings, reached: int, pinned: int) -> int:
    """The budget right after a settings change: a new base (``maxTokens``) or a policy
    just turned adaptive starts again from the base; other changes keep what it reached."""
    restart = before.budget_policy != "adaptive" or before.max_tokens != after.max_tokens
    return budget_of(after, 0 if restart else reached, pinned)


def step(window: Window, settings: WindowSettings) -> list[Eviction]:
    """Move the window's budget one step toward what its recent items call for; what a
    smaller budget evicts (reason ``budget``). Nothing under the ``fixed`` policy."""
    if settings.budget_policy != "adaptive":
        return []
    current = window.limits.max_tokens
    recent = window.recent(RECENT)
    score = complexity(recent)
    # Never below what the pinned items and the newest one (what was just asked for) need.
    newest = recent[-1].tokens if recent and not recent[-1].pinned else 0
    new = next_budget(
        current,
        settings.max_tokens,
        settings.task,
        score,
        settings.budget_ceiling,
        window.pinned_tokens + newest + window.costs.frame,
    )
    if new == current:
        return []
    return window.reconfigure(replace(window.limits, max_tokens=new), token_reason="budget")
