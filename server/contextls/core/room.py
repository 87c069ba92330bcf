"""Whether an item has room in a window, decided before anything changes.

An item must fit the budget on its own (``ItemTooLarge``), and beside the pinned
items, which are never evicted (``NoRoom``). Under an adaptive budget the window may
grow for it, up to ``grow_to`` (the adaptive budget's ceiling): an item that fits the
base is never refused because the budget had shrunk while the work was light.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from contextls.core.costs import Costs
from contextls.core.errors import ItemTooLarge, NoRoom, thousands
from contextls.core.items import Item


class Limited(Protocol):
    """What of a window the checks read (``core.window.Window``)."""

    @property
    def limits(self) -> _Limits: ...

    costs: Costs
    pinned_count: int
    pinned_tokens: int


class _Limits(Protocol):
    @property
    def max_items(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...


def check_limits(window: Limited, max_items: int, max_tokens: int) -> None:
    """Refuse limits the pinned items alone would break (nothing is evicted for them)."""
    if window.pinned_count > max_items:
        raise NoRoom(
            f"maxItems {max_items} is below the {window.pinned_count} pinned items; "
            "unpin some first"
        )
    if max_tokens < window.costs.frame:
        raise NoRoom(
            f"maxTokens {thousands(max_tokens)} cannot hold even the rendered "
            f"context's own heading ({window.costs.frame} tokens)"
        )
    if window.pinned_tokens > max_tokens - window.costs.frame:
        raise NoRoom(
            f"maxTokens {thousands(max_tokens)} is below the "
            f"{thousands(window.pinned_tokens + window.costs.frame)} tokens of pinned items "
            "(as rendered); unpin some first"
        )


def check_size(window: Limited, tokens: int, grow_to: int = 0) -> None:
    """Refuse an item larger than the budget could ever be."""
    budget = max(window.limits.max_tokens, grow_to)
    if tokens > budget - window.costs.frame:
        raise ItemTooLarge(
            f"item has {thousands(tokens)} tokens as rendered; the budget is "
            f"{thousands(budget)} (setting maxTokens)"
        )


def budget_for(window: Limited, tokens: int, leaving: Sequence[Item], grow_to: int = 0) -> int:
    """The token budget the window needs to take an item of ``tokens`` in place of
    ``leaving``: its own, or more (at most ``grow_to``) when only growing makes room
    beside the pinned items. Refused (ItemTooLarge, NoRoom) when no budget allowed does."""
    limits = window.limits
    check_size(window, tokens, grow_to)
    pinned_count, pinned_tokens = window.pinned_count, window.pinned_tokens
    for item in leaving:
        if item.pinned:
            pinned_count -= 1
            pinned_tokens -= item.tokens
    if pinned_count + 1 > limits.max_items:
        raise NoRoom(
            f"all {limits.max_items} places are taken by pinned items; unpin one or raise maxItems"
        )
    needed = pinned_tokens + tokens + window.costs.frame
    budget = max(limits.max_tokens, min(needed, grow_to))
    if needed > budget:
        raise NoRoom(
            f"item has {thousands(tokens)} tokens, but pinned items already use "
            f"{thousands(pinned_tokens)} of the {thousands(budget)}-token budget; unpin "
            "something or raise maxTokens"
        )
    return budget


def evicts_most(gone: Sequence[Item], held_items: int, held_tokens: int) -> bool:
    """Making room takes more than half of what the window held (its items or its tokens):
    a change that does so is made only when the person confirms it (``force``)."""
    if not gone:
        return False
    tokens = sum(item.tokens for item in gone)
    return len(gone) * 2 > held_items or tokens * 2 > held_tokens
