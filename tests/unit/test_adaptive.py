"""The adaptive budget's pure function: the seed's formula, its signs, bounds and steps."""

from __future__ import annotations

import pytest

from contextls.core.adaptive import (
    TASK_MULTIPLIERS,
    Bounds,
    bounds,
    complexity,
    next_budget,
    signs,
    target,
)
from contextls.core.items import Item


def item(kind: str, content: str) -> Item:
    return Item(id="ctx-1", kind=kind, content=content, metadata={}, timestamp=0, tokens=1)  # type: ignore[arg-type]


def test_the_seed_formula() -> None:
    """``base × multiplier × (0.5 + 2.5 × complexity)``, between half and four times."""
    assert target(8000, "general", 0.5) == 8000 * 1.0 * 1.75
    assert target(8000, "coding", 0.2) == int(8000 * 1.5 * 1.0)
    assert target(8000, "general", 0.0) == 4000  # 0.5x: the lower bound
    assert target(8000, "complex_analysis", 1.0) == 32000  # 7.5x, capped at 4x


@pytest.mark.parametrize("task", sorted(TASK_MULTIPLIERS))
def test_each_task_scales_the_target(task: str) -> None:
    multiplier = TASK_MULTIPLIERS[task]
    assert target(1000, task, 0.3, ceiling=100_000) == max(
        500, min(int(1000 * multiplier * 1.25), 4000)
    )


def test_an_empty_window_is_not_complex() -> None:
    assert complexity([]) == 0.0
    assert target(8000, "debugging", complexity([])) == 8000  # 2.0 × 0.5


def test_every_sign_at_once_counts_two_per_item_at_most() -> None:
    demanding = item(
        "error",
        "Traceback: the API's database implementation failed. Why?\n```\ncode\n```\n" + "x" * 600,
    )
    assert signs(demanding) == 4  # fence, error, long, technical (a question only in notes)
    assert complexity([demanding] * 3) == 1.0  # capped
    note = item("text", "what does the algorithm do? " + "y" * 600)
    assert signs(note) == 3  # long, technical, question


def test_signs_map_onto_contextls_items() -> None:
    assert signs(item("code", "x = 1")) == 1  # a code block
    assert signs(item("file", "x = 1")) == 1
    assert signs(item("text", "see ```py\nx\n```")) == 1  # fenced text
    assert signs(item("error", "oops")) == 1
    assert signs(item("text", "the build failed")) == 1  # error words
    assert signs(item("code", "a ? b : c")) == 1  # a ? in code asks nothing
    assert signs(item("text", "plain words")) == 0


def test_only_the_last_ten_items_count() -> None:
    items = [item("error", "failed")] * 5 + [item("text", "quiet")] * 10
    assert complexity(items) == 0.0
    assert complexity(items[:-9]) == 5 / (6 * 2)


def test_the_ceiling_caps_the_upper_bound() -> None:
    assert target(8000, "complex_analysis", 1.0, ceiling=20_000) == 20_000
    assert bounds(8000, 20_000).high == 20_000
    assert bounds(8000, 0).high == 32_000
    # A ceiling under half the base (refused when set) wins over that floor.
    assert bounds(8000, 3000) == Bounds(3000, 3000)
    assert bounds(8000, 3000, pinned=3500) == Bounds(3500, 3500)  # the pinned items do not


def test_a_step_is_at_most_a_quarter_of_the_base() -> None:
    assert next_budget(8000, 8000, "complex_analysis", 1.0) == 10_000
    assert next_budget(10_000, 8000, "general", 0.0) == 8000
    assert next_budget(8000, 8000, "general", 0.5) == 10_000  # target 14,000
    assert next_budget(13_500, 8000, "general", 0.5) == 14_000  # the last step is smaller


def test_the_budget_never_goes_below_the_pinned_items() -> None:
    assert next_budget(6000, 8000, "general", 0.0, pinned=5500) == 5500
    assert next_budget(6000, 8000, "general", 0.0, pinned=3000) == 4000
