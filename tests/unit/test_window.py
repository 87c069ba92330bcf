"""The sliding window of one workspace (contextls.core.window).

Tokens are counted one per whitespace-separated word of an item's text, and time
comes from a fake clock, so every budget and every relevance score is visible in the
test. The render's markup (headings, fences: lines that start with ``#`` or a
backtick) counts nothing here; what it costs is ``tests/unit/test_costs.py``'s, with
the real tokenizer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

import contextls.core.relevance as relevance_module
import contextls.core.window as window_module
from contextls.core.errors import ContextError, ItemTooLarge, NoRoom, UnknownItem
from contextls.core.items import Item
from contextls.core.window import AddOutcome, Candidate, Limits, Window
from contextls.protocol import ErrorCode, EvictionPolicy, ItemKind

HOUR_MS = 3_600_000


class Clock:
    """A clock that moves only when a test moves it."""

    def __init__(self, start: int = 1_700_000_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


class CountingWords:
    """One token per word, remembering how often it was asked to count an item's text
    (headings and the frame, all markup, are counted apart and often: not those)."""

    def __init__(self, factor: int = 1) -> None:
        self.factor = factor
        self.calls = 0

    def __call__(self, text: str) -> int:
        if any(line and not line.startswith(MARKUP) for line in text.splitlines()):
            self.calls += 1
        return self.factor * words(text)


def words(text: str) -> int:
    """Words of the text, not of the markup around it."""
    return sum(len(line.split()) for line in text.splitlines() if not line.startswith(MARKUP))


MARKUP = ("#", "`")


def make_window(
    max_items: int = 50,
    max_tokens: int = 8000,
    policy: EvictionPolicy = "fifo",
    clock: Clock | None = None,
    count: Callable[[str], int] = words,
) -> Window:
    return Window(Limits(max_items, max_tokens, policy), count, clock or Clock(), "words")


def text(content: str, kind: ItemKind = "text", pin: bool = False) -> Candidate:
    return Candidate(kind, content, {}, pin)


def tokens_text(n: int, tag: str = "t", pin: bool = False, kind: ItemKind = "text") -> Candidate:
    """A text item of exactly ``n`` tokens (words), distinct per ``tag``."""
    return Candidate(kind, " ".join([tag] * n), {}, pin)


def region_lines(path: str, start: int, end: int, tag: str = "") -> list[str]:
    return [f"{path}:{line}{tag}" for line in range(start, end + 1)]


def region(
    path: str,
    start: int,
    end: int,
    body: str | None = None,
    pin: bool = False,
    tag: str = "",
    **metadata: Any,
) -> Candidate:
    """A code region whose text has one line (one token) per line of its range."""
    content = body if body is not None else "\n".join(region_lines(path, start, end, tag))
    meta = {"path": path, "startLine": start, "endLine": end, **metadata}
    return Candidate("code", content, meta, pin)


def whole_file(path: str, content: str, pin: bool = False) -> Candidate:
    return Candidate("file", content, {"path": path}, pin)


def ids(window: Window) -> list[str]:
    return [item.id for item in window]


def snapshot(window: Window) -> tuple[Any, ...]:
    """Everything a refused call must leave exactly as it was."""
    return (
        [
            (
                item.id,
                item.kind,
                item.content,
                dict(item.metadata),
                item.tokens,
                item.pinned,
                item.seq,
                item.timestamp,
                item.encoding,
            )
            for item in window
        ],
        window.tokens,
        window.pinned_count,
        window.pinned_tokens,
        window.next_id,
        window.next_seq,
        window.limits,
        window.encoding,
        [item.id for item in window.last_evicted],
    )


def assert_accounting(window: Window) -> None:
    items = list(window)
    assert len(window) == len(items)
    assert window.tokens == sum(item.tokens for item in items)
    assert window.pinned_count == sum(1 for item in items if item.pinned)
    assert window.pinned_tokens == sum(item.tokens for item in items if item.pinned)
    assert window.stale_count == sum(1 for item in items if item.stale)
    assert len(items) <= window.limits.max_items
    assert window.tokens <= window.limits.max_tokens


def evicted_ids(outcome: AddOutcome) -> list[str]:
    return [eviction.item.id for eviction in outcome.evicted]


# ------------------------------------------------------------ FIFO eviction


def test_seed_example_fifty_first_item_evicts_item_one_and_keeps_order() -> None:
    window = make_window()  # the seed's defaults: 50 items
    for n in range(1, 51):
        assert window.add(text(f"item-{n}")).evicted == []
    assert len(window) == 50

    outcome = window.add(text("item-51"))

    assert [(e.item.content, e.reason) for e in outcome.evicted] == [("item-1", "maxItems")]
    assert [item.content for item in window] == [f"item-{n}" for n in range(2, 52)]
    assert ids(window) == [f"ctx-{n}" for n in range(2, 52)]
    assert list(window.last_evicted)[-1].content == "item-1"
    assert_accounting(window)


def test_token_budget_evicts_oldest_items_until_the_new_one_fits() -> None:
    window = make_window(max_tokens=10)
    for tag in "abc":
        window.add(tokens_text(3, tag))  # 9 tokens

    outcome = window.add(tokens_text(7, "d"))  # 16 -> drop a (13) -> drop b (10)

    assert [(e.item.id, e.reason) for e in outcome.evicted] == [
        ("ctx-1", "maxTokens"),
        ("ctx-2", "maxTokens"),
    ]
    assert ids(window) == ["ctx-3", "ctx-4"]
    assert window.tokens == 10
    assert_accounting(window)


def test_new_item_that_fills_the_whole_budget_evicts_every_unpinned_item() -> None:
    window = make_window(max_tokens=10)
    for tag in "abcde":
        window.add(tokens_text(2, tag))

    outcome = window.add(tokens_text(10, "z"))

    assert evicted_ids(outcome) == ["ctx-1", "ctx-2", "ctx-3", "ctx-4", "ctx-5"]
    assert ids(window) == ["ctx-6"]
    assert_accounting(window)


def test_pinned_items_are_never_evicted_the_oldest_unpinned_goes() -> None:
    window = make_window(max_items=3)
    window.add(text("a", pin=True))
    window.add(text("b"))
    window.add(text("c"))

    outcome = window.add(text("d"))

    assert [(e.item.content, e.reason) for e in outcome.evicted] == [("b", "maxItems")]
    assert [item.content for item in window] == ["a", "c", "d"]
    assert window.get("ctx-1").pinned


def test_pinned_items_survive_token_pressure() -> None:
    window = make_window(max_tokens=10)
    window.add(tokens_text(4, "p", pin=True))
    window.add(tokens_text(3, "a"))
    window.add(tokens_text(3, "b"))

    outcome = window.add(tokens_text(6, "c"))

    assert evicted_ids(outcome) == ["ctx-2", "ctx-3"]
    assert ids(window) == ["ctx-1", "ctx-4"]
    assert_accounting(window)


# --------------------------------------------------------------- refusals


def test_item_larger_than_the_budget_is_refused_and_nothing_changes() -> None:
    window = make_window(max_tokens=10)
    window.add(tokens_text(4, "a"))
    window.add(tokens_text(4, "b", pin=True))
    before = snapshot(window)

    with pytest.raises(ItemTooLarge) as caught:
        window.add(tokens_text(11, "big"))

    assert caught.value.code == ErrorCode.ITEM_TOO_LARGE
    assert "11" in caught.value.message and "10" in caught.value.message
    assert snapshot(window) == before
    assert window.add(text("next")).item.id == "ctx-3"  # the refusal used no id


def test_item_that_cannot_fit_beside_pinned_items_is_refused_and_nothing_changes() -> None:
    window = make_window(max_tokens=10)
    window.add(tokens_text(8, "pinned", pin=True))
    window.add(tokens_text(2, "loose"))
    before = snapshot(window)

    with pytest.raises(NoRoom) as caught:
        window.add(tokens_text(3, "new"))  # fits the budget, not beside 8 pinned tokens

    assert caught.value.code == ErrorCode.NO_ROOM
    assert snapshot(window) == before


def test_every_place_pinned_refuses_a_new_item() -> None:
    window = make_window(max_items=2)
    window.add(text("a", pin=True))
    window.add(text("b", pin=True))
    before = snapshot(window)

    with pytest.raises(NoRoom):
        window.add(text("c"))

    assert snapshot(window) == before


def test_refreshing_a_pinned_item_is_allowed_when_every_place_is_pinned() -> None:
    window = make_window(max_items=2)
    window.add(text("a", pin=True))
    window.add(text("b", pin=True))

    outcome = window.add(text("a"))

    assert outcome.item.id == "ctx-1" and not outcome.created
    assert outcome.item.pinned
    assert ids(window) == ["ctx-2", "ctx-1"]
    assert_accounting(window)


def test_refused_refresh_leaves_the_existing_item_untouched() -> None:
    window = make_window(max_tokens=5)
    window.add(region("a.py", 1, 2))
    before = snapshot(window)

    with pytest.raises(ItemTooLarge):
        window.add(region("a.py", 1, 2, body="one two three\nfour five six"))

    assert snapshot(window) == before


# --------------------------------------------------------------------- ids


def test_ids_are_ctx_n_in_order_of_creation() -> None:
    window = make_window()
    assert [window.add(text(f"t{n}")).item.id for n in range(1, 6)] == [
        f"ctx-{n}" for n in range(1, 6)
    ]


def test_ids_are_never_reused_after_eviction_remove_or_clear() -> None:
    window = make_window(max_items=2)
    for n in range(3):
        window.add(text(f"t{n}"))  # ctx-1 evicted
    window.remove(["ctx-3"])
    assert window.add(text("after remove")).item.id == "ctx-4"
    window.clear(keep_pinned=False)
    assert len(window) == 0
    assert window.add(text("after clear")).item.id == "ctx-5"
    # Adding the very texts of gone items again gives them new ids.
    assert window.add(text("t0")).item.id == "ctx-6"


def test_a_merge_takes_a_new_id_and_the_absorbed_ids_are_retired() -> None:
    window = make_window()
    window.add(region("a.py", 1, 3))
    merged = window.add(region("a.py", 3, 5))
    assert merged.item.id == "ctx-2"
    again = window.add(region("a.py", 8, 9))
    assert again.item.id == "ctx-3"


# ------------------------------------------------------------------- dedup


def test_same_range_of_same_file_refreshes_the_item() -> None:
    clock = Clock()
    window = make_window(clock=clock)
    first = window.add(region("a.py", 1, 3)).item
    window.add(text("other"))
    clock.advance(1000)

    outcome = window.add(region("a.py", 1, 3, tag="'", symbol="main"))

    assert outcome.item.id == first.id == "ctx-1"
    assert outcome.deduplicated and not outcome.created
    assert outcome.absorbed == [] and outcome.evicted == []
    assert ids(window) == ["ctx-2", "ctx-1"]  # moved to newest
    assert outcome.item.content == "a.py:1'\na.py:2'\na.py:3'"
    assert outcome.item.metadata["symbol"] == "main"
    assert outcome.item.timestamp == clock.now > first.timestamp
    assert outcome.item.seq > window.get("ctx-2").seq
    assert len(window) == 2
    assert_accounting(window)


def test_refresh_with_new_text_recounts_its_tokens() -> None:
    window = make_window()
    window.add(region("a.py", 1, 2))
    outcome = window.add(region("a.py", 1, 2, body="one two three\nfour five"))
    assert outcome.item.tokens == 5
    assert window.tokens == 5


def test_refresh_with_unchanged_text_does_not_count_again() -> None:
    count = CountingWords()
    window = make_window(count=count)
    window.add(region("a.py", 1, 2))
    window.add(text("hello world"))
    assert count.calls == 2

    window.add(region("a.py", 1, 2))
    window.add(text("hello world"))

    assert count.calls == 2


def test_overlapping_ranges_merge_with_the_newest_text_winning() -> None:
    window = make_window()
    window.add(region("a.py", 1, 3, tag="old"))

    outcome = window.add(region("a.py", 2, 5, tag="new"))

    assert outcome.created and outcome.deduplicated
    assert outcome.item.id == "ctx-2"
    assert [item.id for item in outcome.absorbed] == ["ctx-1"]
    assert outcome.item.content == "a.py:1old\na.py:2new\na.py:3new\na.py:4new\na.py:5new"
    assert outcome.item.lines == (1, 5)
    assert (outcome.item.metadata["startLine"], outcome.item.metadata["endLine"]) == (1, 5)
    assert outcome.item.label == "a.py:1-5"
    assert ids(window) == ["ctx-2"]
    assert outcome.item.tokens == 5
    assert_accounting(window)


def test_older_text_fills_the_lines_the_new_region_does_not_cover() -> None:
    window = make_window()
    window.add(region("a.py", 4, 8, tag="old"))

    outcome = window.add(region("a.py", 5, 6, tag="new"))

    assert outcome.item.content.split("\n") == [
        "a.py:4old",
        "a.py:5new",
        "a.py:6new",
        "a.py:7old",
        "a.py:8old",
    ]
    assert outcome.item.lines == (4, 8)


def test_adjacent_ranges_merge() -> None:
    window = make_window()
    window.add(region("a.py", 1, 2))

    outcome = window.add(region("a.py", 3, 4))

    assert [item.id for item in outcome.absorbed] == ["ctx-1"]
    assert outcome.item.content == "a.py:1\na.py:2\na.py:3\na.py:4"
    assert outcome.item.lines == (1, 4)
    assert len(window) == 1


def test_merge_keeps_a_trailing_newline_of_the_new_text() -> None:
    window = make_window()
    window.add(region("a.py", 1, 2))
    outcome = window.add(region("a.py", 3, 3, body="a.py:3\n"))
    assert outcome.item.content == "a.py:1\na.py:2\na.py:3\n"


def test_merge_drops_symbol_metadata_when_the_range_grows() -> None:
    window = make_window()
    window.add(region("a.py", 1, 3))

    outcome = window.add(region("a.py", 3, 6, symbol="main", symbolKind="function"))

    assert outcome.item.lines == (1, 6)
    assert "symbol" not in outcome.item.metadata
    assert "symbolKind" not in outcome.item.metadata
    assert outcome.item.label == "a.py:1-6"


def test_merge_keeps_symbol_metadata_when_the_symbol_covers_the_merged_range() -> None:
    window = make_window()
    window.add(region("a.py", 3, 4))

    outcome = window.add(region("a.py", 1, 6, symbol="main", symbolKind="function"))

    assert outcome.item.lines == (1, 6)
    assert outcome.item.metadata["symbol"] == "main"
    assert outcome.item.metadata["symbolKind"] == "function"


def test_one_region_spanning_a_chain_of_regions_merges_them_all() -> None:
    window = make_window()
    window.add(region("a.py", 1, 2))
    window.add(region("a.py", 4, 5))
    window.add(region("a.py", 7, 8))
    window.add(region("a.py", 20, 21))
    assert len(window) == 4

    outcome = window.add(region("a.py", 3, 6, tag="*"))

    assert sorted(item.id for item in outcome.absorbed) == ["ctx-1", "ctx-2", "ctx-3"]
    assert outcome.item.lines == (1, 8)
    assert outcome.item.content.split("\n") == [
        "a.py:1",
        "a.py:2",
        "a.py:3*",
        "a.py:4*",
        "a.py:5*",
        "a.py:6*",
        "a.py:7",
        "a.py:8",
    ]
    assert ids(window) == ["ctx-4", "ctx-5"]
    assert_accounting(window)


def test_regions_touching_only_through_each_other_merge_transitively() -> None:
    # A persisted window may hold two touching regions (5-6 and 7-8). A new
    # region 3-4 touches only 5-6 directly; 7-8 touches the grown union.
    window = make_window()
    second = Item("ctx-2", "code", "a.py:7\na.py:8", _meta("a.py", 7, 8), 1, 2, seq=1)
    first = Item("ctx-1", "code", "a.py:5\na.py:6", _meta("a.py", 5, 6), 1, 2, seq=2)
    window.load([second, first], next_id=3, next_seq=3)

    outcome = window.add(region("a.py", 3, 4))

    assert sorted(item.id for item in outcome.absorbed) == ["ctx-1", "ctx-2"]
    assert outcome.item.lines == (3, 8)
    assert outcome.item.content == "\n".join(region_lines("a.py", 3, 8))
    assert ids(window) == ["ctx-3"]


def _meta(path: str, start: int, end: int) -> dict[str, Any]:
    return {"path": path, "startLine": start, "endLine": end}


def test_ranges_with_a_gap_stay_apart() -> None:
    window = make_window()
    window.add(region("a.py", 1, 2))

    outcome = window.add(region("a.py", 4, 5))

    assert outcome.created and not outcome.deduplicated and outcome.absorbed == []
    assert ids(window) == ["ctx-1", "ctx-2"]


def test_same_range_of_another_file_stays_apart() -> None:
    window = make_window()
    window.add(region("a.py", 1, 2))
    outcome = window.add(region("b.py", 1, 2))
    assert outcome.created and not outcome.deduplicated
    assert len(window) == 2


def test_whole_file_absorbs_the_regions_of_that_file_only() -> None:
    window = make_window()
    window.add(region("a.py", 1, 2))
    window.add(region("b.py", 1, 2))
    window.add(region("a.py", 10, 12))

    outcome = window.add(whole_file("a.py", "the whole file"))

    assert outcome.created and outcome.deduplicated
    assert outcome.item.id == "ctx-4"
    assert sorted(item.id for item in outcome.absorbed) == ["ctx-1", "ctx-3"]
    assert ids(window) == ["ctx-2", "ctx-4"]
    assert window.tokens == 2 + 3
    assert_accounting(window)


def test_whole_file_absorbing_a_pinned_region_is_pinned() -> None:
    window = make_window()
    window.add(region("a.py", 1, 2, pin=True))
    outcome = window.add(whole_file("a.py", "x y z"))
    assert outcome.item.pinned
    assert window.pinned_count == 1 and window.pinned_tokens == 3


def test_merging_a_pinned_region_keeps_the_pin() -> None:
    window = make_window()
    window.add(region("a.py", 1, 2, pin=True))
    outcome = window.add(region("a.py", 2, 3))
    assert outcome.item.pinned
    assert_accounting(window)


def test_whole_file_added_again_refreshes_the_file_item() -> None:
    window = make_window()
    window.add(whole_file("a.py", "version one"))
    window.add(text("other"))

    outcome = window.add(whole_file("a.py", "version two is longer"))

    assert outcome.item.id == "ctx-1" and not outcome.created and outcome.deduplicated
    assert outcome.item.content == "version two is longer"
    assert outcome.item.tokens == 4
    assert ids(window) == ["ctx-2", "ctx-1"]
    assert_accounting(window)


def test_region_of_a_file_already_whole_in_the_window_refreshes_the_file_item() -> None:
    window = make_window()
    window.add(whole_file("a.py", "whole file text"))
    window.add(text("other"))

    outcome = window.add(region("a.py", 1, 2))

    assert outcome.item.id == "ctx-1"
    assert not outcome.created and outcome.deduplicated
    assert outcome.item.kind == "file"
    assert outcome.item.content == "whole file text"
    assert ids(window) == ["ctx-2", "ctx-1"]
    assert len(window) == 2
    assert_accounting(window)


def test_identical_text_is_refreshed_not_duplicated() -> None:
    window = make_window()
    window.add(text("KeyError: 'x'", kind="error"))
    window.add(text("something else"))

    outcome = window.add(text("KeyError: 'x'", kind="error"))

    assert outcome.item.id == "ctx-1"
    assert outcome.deduplicated and not outcome.created
    assert ids(window) == ["ctx-2", "ctx-1"]


def test_identical_text_of_another_kind_is_a_separate_item() -> None:
    window = make_window()
    window.add(text("KeyError: 'x'", kind="error"))

    outcome = window.add(text("KeyError: 'x'", kind="text"))

    assert outcome.created and not outcome.deduplicated
    assert outcome.item.id == "ctx-2"
    assert len(window) == 2


def test_same_range_readded_beside_an_unmerged_neighbour_is_not_duplicated() -> None:
    # A neighbour whose text does not line up with its range cannot be merged,
    # so it is kept apart. Re-adding a region that already exists with exactly
    # the same range must still refresh that region, not add a second copy.
    window = make_window()
    window.add(region("a.py", 3, 4, body="one line for two"))  # ctx-1, kept apart below
    window.add(region("a.py", 1, 2))  # ctx-2: touches ctx-1, merge impossible

    outcome = window.add(region("a.py", 1, 2))

    same_range = [item.id for item in window if item.path == "a.py" and item.lines == (1, 2)]
    assert same_range == [outcome.item.id]
    assert outcome.item.id == "ctx-2" and not outcome.created and outcome.deduplicated


# ------------------------------------------------------------------ remove


def test_remove_takes_items_out_and_updates_totals() -> None:
    window = make_window()
    window.add(tokens_text(2, "a"))
    window.add(tokens_text(3, "b", pin=True))
    window.add(tokens_text(4, "c"))

    removed = window.remove(["ctx-2", "ctx-1", "ctx-2"])

    assert [item.id for item in removed] == ["ctx-2", "ctx-1"]
    assert ids(window) == ["ctx-3"]
    assert window.tokens == 4 and window.pinned_count == 0 and window.pinned_tokens == 0
    assert_accounting(window)


def test_remove_with_an_unknown_id_removes_nothing() -> None:
    window = make_window()
    window.add(text("a"))
    window.add(text("b"))
    before = snapshot(window)

    with pytest.raises(UnknownItem) as caught:
        window.remove(["ctx-1", "ctx-99"])

    assert caught.value.code == ErrorCode.UNKNOWN_ITEM
    assert "ctx-99" in caught.value.message
    assert snapshot(window) == before


def test_removed_text_added_again_is_a_new_item() -> None:
    window = make_window()
    window.add(text("a"))
    window.remove(["ctx-1"])
    outcome = window.add(text("a"))
    assert outcome.created and not outcome.deduplicated and outcome.item.id == "ctx-2"


def test_removed_region_no_longer_merges() -> None:
    window = make_window()
    window.add(region("a.py", 1, 2))
    window.remove(["ctx-1"])
    outcome = window.add(region("a.py", 2, 3))
    assert outcome.absorbed == [] and outcome.item.lines == (2, 3)


# -------------------------------------------------------------------- pins


def test_set_pinned_updates_pinned_totals() -> None:
    window = make_window()
    window.add(tokens_text(2, "a"))
    window.add(tokens_text(5, "b"))

    item = window.set_pinned("ctx-2", True)

    assert item.pinned and window.pinned_count == 1 and window.pinned_tokens == 5
    assert window.set_pinned("ctx-2", True) is item  # pinning twice is harmless
    assert window.pinned_count == 1
    window.set_pinned("ctx-2", False)
    assert window.pinned_count == 0 and window.pinned_tokens == 0
    assert_accounting(window)


def test_set_pinned_on_an_unknown_id_is_refused() -> None:
    window = make_window()
    window.add(text("a"))
    before = snapshot(window)
    with pytest.raises(UnknownItem):
        window.set_pinned("ctx-7", True)
    assert snapshot(window) == before


def test_unpinning_puts_the_item_back_at_its_place_in_time() -> None:
    window = make_window(max_items=3)
    for tag in "abc":
        window.add(text(tag))
    window.set_pinned("ctx-1", True)
    assert window.next_eviction() is window.get("ctx-2")

    window.set_pinned("ctx-1", False)

    assert window.next_eviction() is window.get("ctx-1")
    outcome = window.add(text("d"))
    assert evicted_ids(outcome) == ["ctx-1"]
    assert ids(window) == ["ctx-2", "ctx-3", "ctx-4"]


def test_unpinning_a_middle_item_keeps_fifo_order_by_time() -> None:
    window = make_window(max_items=4)
    for tag in "abcd":
        window.add(text(tag))
    window.set_pinned("ctx-1", True)
    window.set_pinned("ctx-3", True)
    window.set_pinned("ctx-3", False)

    first = window.add(text("e"))
    second = window.add(text("f"))
    third = window.add(text("g"))

    assert [evicted_ids(o) for o in (first, second, third)] == [["ctx-2"], ["ctx-3"], ["ctx-4"]]
    assert ids(window) == ["ctx-1", "ctx-5", "ctx-6", "ctx-7"]


# ------------------------------------------------------------------- clear


def test_clear_keeping_pinned_items() -> None:
    window = make_window()
    window.add(tokens_text(2, "a"))
    window.add(tokens_text(3, "b", pin=True))
    window.add(tokens_text(4, "c"))

    gone = window.clear(keep_pinned=True)

    assert [item.id for item in gone] == ["ctx-1", "ctx-3"]
    assert ids(window) == ["ctx-2"]
    assert window.tokens == 3 and window.pinned_tokens == 3
    assert_accounting(window)


def test_clear_everything_includes_pinned_items() -> None:
    window = make_window()
    window.add(text("a", pin=True))
    window.add(text("b"))

    gone = window.clear(keep_pinned=False)

    assert [item.id for item in gone] == ["ctx-1", "ctx-2"]
    assert len(window) == 0
    assert window.tokens == window.pinned_tokens == window.pinned_count == 0
    assert window.next_eviction() is None


def test_cleared_region_and_text_no_longer_deduplicate() -> None:
    window = make_window()
    window.add(text("a"))
    window.add(region("a.py", 1, 2))
    window.clear(keep_pinned=False)
    assert window.add(text("a")).created
    assert window.add(region("a.py", 1, 2)).created
    assert len(window) == 2


# ------------------------------------------------------------- reconfigure


def test_lowering_max_items_evicts_the_oldest_at_once() -> None:
    window = make_window(max_items=5)
    for tag in "abcde":
        window.add(text(tag))
    window.set_pinned("ctx-1", True)

    evictions = window.reconfigure(Limits(2, 8000, "fifo"))

    assert [(e.item.id, e.reason) for e in evictions] == [
        ("ctx-2", "maxItems"),
        ("ctx-3", "maxItems"),
        ("ctx-4", "maxItems"),
    ]
    assert ids(window) == ["ctx-1", "ctx-5"]
    assert window.limits == Limits(2, 8000, "fifo")
    assert_accounting(window)


def test_lowering_max_tokens_evicts_at_once() -> None:
    window = make_window()
    for tag in "abc":
        window.add(tokens_text(4, tag))

    evictions = window.reconfigure(Limits(50, 5, "fifo"))

    assert [(e.item.id, e.reason) for e in evictions] == [
        ("ctx-1", "maxTokens"),
        ("ctx-2", "maxTokens"),
    ]
    assert window.tokens == 4
    assert_accounting(window)


def test_raising_limits_evicts_nothing() -> None:
    window = make_window(max_items=2)
    window.add(text("a"))
    window.add(text("b"))
    assert window.reconfigure(Limits(10, 9000, "relevance")) == []
    assert window.limits.policy == "relevance"
    assert len(window) == 2


def test_limits_below_the_pinned_item_count_are_refused() -> None:
    window = make_window()
    window.add(text("a", pin=True))
    window.add(text("b", pin=True))
    window.add(text("c"))
    before = snapshot(window)

    with pytest.raises(NoRoom):
        window.reconfigure(Limits(1, 8000, "fifo"))

    assert snapshot(window) == before


def test_limits_below_the_pinned_tokens_are_refused() -> None:
    window = make_window()
    window.add(tokens_text(6, "p", pin=True))
    window.add(tokens_text(2, "q"))
    before = snapshot(window)

    with pytest.raises(NoRoom) as caught:
        window.reconfigure(Limits(50, 5, "fifo"))

    assert "6" in caught.value.message
    assert snapshot(window) == before


# -------------------------------------------------------------- retokenize


def test_retokenize_counts_each_item_once_and_applies_the_budget() -> None:
    window = make_window(max_tokens=12)
    window.add(tokens_text(2, "a"))
    window.add(tokens_text(2, "b"))
    window.add(tokens_text(3, "c", pin=True))
    triple = CountingWords(factor=3)

    evictions = window.retokenize(triple, "triple")

    assert triple.calls == 3
    assert [(e.item.id, e.reason) for e in evictions] == [
        ("ctx-1", "maxTokens"),
        ("ctx-2", "maxTokens"),
    ]
    assert ids(window) == ["ctx-3"]
    assert window.get("ctx-3").tokens == 9 and window.get("ctx-3").encoding == "triple"
    assert window.encoding == "triple"
    assert_accounting(window)
    # New items are counted with the new counter.
    window.add(text("one"))
    assert window.get("ctx-4").tokens == 3
    assert triple.calls == 4


def test_retokenize_to_the_same_encoding_counts_nothing() -> None:
    window = make_window()
    window.add(text("a b"))
    counter = CountingWords()
    assert window.retokenize(counter, "words") == []
    assert counter.calls == 0


def test_retokenize_that_pinned_items_cannot_survive_is_refused_and_changes_nothing() -> None:
    window = make_window(max_tokens=10)
    window.add(tokens_text(5, "p", pin=True))
    window.add(tokens_text(2, "q"))
    before = snapshot(window)

    with pytest.raises(ContextError):
        window.retokenize(CountingWords(factor=3), "triple")  # pinned: 15 > 10

    assert snapshot(window) == before


# -------------------------------------------------------------------- load


def test_load_restores_order_ids_tokens_and_indexes() -> None:
    clock = Clock()
    source = make_window(clock=clock)
    source.add(text("note"))
    source.add(region("a.py", 1, 2, pin=True))
    source.add(whole_file("b.py", "b contents here"))
    source.add(text("note"))  # refresh: ctx-1 moves to newest
    persisted = [replace(item, metadata=dict(item.metadata)) for item in source]

    restored = make_window(clock=clock)
    restored.load(persisted, source.next_id, source.next_seq)

    assert ids(restored) == ids(source) == ["ctx-2", "ctx-3", "ctx-1"]
    assert [i.seq for i in restored] == [i.seq for i in source]
    assert restored.tokens == source.tokens
    assert restored.pinned_count == 1 and restored.pinned_tokens == 2
    assert_accounting(restored)
    # Indexes are rebuilt: the same text and range refresh, a new item gets the next id.
    assert restored.add(text("note")).item.id == "ctx-1"
    assert restored.add(region("a.py", 1, 2)).item.id == "ctx-2"
    assert restored.add(region("b.py", 3, 4)).item.id == "ctx-3"
    fresh = restored.add(text("new"))
    assert fresh.item.id == "ctx-4"
    assert fresh.item.seq > max(item.seq for item in persisted)


def test_load_recounts_items_counted_with_another_encoding() -> None:
    window = make_window()
    stale = Item("ctx-1", "text", "a b c", {}, 1, tokens=99, seq=1, encoding="old")
    window.load([stale], next_id=2, next_seq=2)
    assert window.get("ctx-1").tokens == 3
    assert window.get("ctx-1").encoding == "words"
    assert window.tokens == 3


def test_load_keeps_new_timestamps_from_going_back() -> None:
    clock = Clock(start=1_000)
    window = make_window(clock=clock)
    late = Item("ctx-1", "text", "a", {}, timestamp=5_000, tokens=1, seq=1, encoding="words")
    window.load([late], next_id=2, next_seq=2)
    assert window.add(text("b")).item.timestamp >= 5_000


def test_load_replaces_previous_state() -> None:
    window = make_window()
    window.add(text("old one", pin=True))
    window.load([], next_id=10, next_seq=10)
    assert len(window) == 0
    assert window.tokens == window.pinned_count == window.pinned_tokens == 0
    assert window.add(text("old one")).item.id == "ctx-10"


# ---------------------------------------------------- relevance and next_eviction


def test_next_eviction_under_fifo_is_the_oldest_unpinned_item() -> None:
    window = make_window()
    assert window.next_eviction() is None
    window.add(text("a", pin=True))
    assert window.next_eviction() is None
    window.add(text("b"))
    window.add(text("c"))
    assert window.next_eviction() is window.get("ctx-2")


def test_next_eviction_under_relevance_is_the_lowest_score() -> None:
    window = make_window(policy="relevance")
    window.add(text("boom", kind="error"))
    window.add(text("misc", kind="custom"))
    window.add(text("prose", kind="text"))
    victim = window.next_eviction()
    assert victim is not None and victim.id == "ctx-2"


def test_relevance_evicts_custom_before_an_older_error() -> None:
    window = make_window(max_items=3, policy="relevance")
    window.add(text("Traceback: boom", kind="error"))
    window.add(text("misc note", kind="custom"))
    window.add(text("def f(): ...", kind="code"))

    outcome = window.add(text("another error", kind="error"))

    assert [(e.item.id, e.reason) for e in outcome.evicted] == [("ctx-2", "maxItems")]
    assert ids(window) == ["ctx-1", "ctx-3", "ctx-4"]


def test_relevance_ties_go_to_the_oldest() -> None:
    window = make_window(max_items=3, policy="relevance")
    for tag in "abc":
        window.add(text(tag))  # same kind, same timestamp: equal scores

    outcome = window.add(text("d"))

    assert evicted_ids(outcome) == ["ctx-1"]


def test_relevance_recency_lets_an_old_text_go_before_a_fresh_repl_transcript() -> None:
    clock = Clock()
    window = make_window(max_items=2, policy="relevance", clock=clock)
    window.add(text("old note"))  # text: 0.3 + 0.3 * recency
    clock.advance(72 * HOUR_MS)
    window.add(text(">>> 1 + 1\n2", kind="repl-history"))  # 0.2 + 0.3 now

    outcome = window.add(text("fresh note"))

    assert evicted_ids(outcome) == ["ctx-1"]


def test_relevance_without_time_passing_evicts_the_repl_transcript_first() -> None:
    window = make_window(max_items=2, policy="relevance")
    window.add(text("old note"))
    window.add(text(">>> 1 + 1\n2", kind="repl-history"))
    outcome = window.add(text("fresh note"))
    assert evicted_ids(outcome) == ["ctx-2"]


def test_relevance_never_evicts_pinned_items() -> None:
    window = make_window(max_items=2, policy="relevance")
    window.add(text("pinned misc", kind="custom", pin=True))
    window.add(text("an error", kind="error"))
    outcome = window.add(text("another", kind="custom"))
    assert evicted_ids(outcome) == ["ctx-2"]


# -------------------------------------------------------------- chronology


def test_timestamps_never_go_back_when_the_clock_does() -> None:
    clock = Clock(start=10_000)
    window = make_window(clock=clock)
    window.add(text("a"))
    clock.advance(-5_000)
    second = window.add(text("b")).item
    assert second.timestamp == 10_000
    stamps = [item.timestamp for item in window]
    seqs = [item.seq for item in window]
    assert stamps == sorted(stamps)
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_token_totals_match_the_items_after_every_operation() -> None:
    window = make_window(max_items=4, max_tokens=20)
    steps: list[Callable[[], object]] = [
        lambda: window.add(tokens_text(3, "a")),
        lambda: window.add(region("a.py", 1, 3, pin=True)),
        lambda: window.add(region("a.py", 3, 6)),
        lambda: window.add(tokens_text(5, "b")),
        lambda: window.add(whole_file("a.py", "one two")),
        lambda: window.add(tokens_text(9, "c")),
        lambda: window.set_pinned(ids(window)[-1], True),
        lambda: window.add(tokens_text(6, "d")),
        lambda: window.set_pinned(ids(window)[0], False),
        lambda: window.reconfigure(Limits(3, 40, "relevance")),
        lambda: window.remove([ids(window)[0]]),
        lambda: window.retokenize(CountingWords(factor=2), "double"),
        lambda: window.add(tokens_text(2, "e")),
        lambda: window.clear(keep_pinned=True),
        lambda: window.clear(keep_pinned=False),
    ]
    for step in steps:
        step()
        assert_accounting(window)


# ------------------------------------------------- cost of eviction (structure)


def test_adds_at_capacity_count_tokens_once_per_item() -> None:
    count = CountingWords()
    window = make_window(max_items=50, max_tokens=1_000_000, count=count)

    evicted = sum(len(window.add(text(f"item {n}")).evicted) for n in range(1000))

    assert count.calls == 1000
    assert evicted == 950
    assert len(window) == 50
    assert window.tokens == 100


def test_adds_at_the_token_budget_count_tokens_once_per_item() -> None:
    count = CountingWords()
    window = make_window(max_items=1000, max_tokens=100, count=count)

    for n in range(1000):
        window.add(text(f"item {n} {'x ' * (n % 7)}"))
        assert window.tokens <= 100

    assert count.calls == 1000
    assert_accounting(window)


def test_eviction_hands_back_the_original_items_and_keeps_the_same_containers() -> None:
    window = make_window(max_items=10)
    added = [window.add(text(f"item {n}")).item for n in range(10)]
    items_dict, unpinned_dict = window._items, window._unpinned

    for n in range(10, 1000):
        outcome = window.add(text(f"item {n}"))
        # FIFO: the item that leaves is the very object added ten adds earlier.
        assert len(outcome.evicted) == 1
        assert outcome.evicted[0].item is added[n - 10]
        added.append(outcome.item)

    assert window._items is items_dict  # the window was never rebuilt or copied
    assert window._unpinned is unpinned_dict
    assert [item.id for item in window] == [item.id for item in added[-10:]]
    assert len(window.last_evicted) == window_module.LAST_EVICTED_KEPT


def test_fifo_eviction_never_scores_items(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(item: Item, now_ms: int) -> float:
        raise AssertionError("fifo eviction must not compute relevance")

    monkeypatch.setattr(relevance_module, "relevance", refuse)
    window = make_window(max_items=5)
    for n in range(100):
        window.add(text(f"item {n}"))
    assert len(window) == 5


def test_stale_count_follows_marks_refreshes_and_evictions() -> None:
    window = make_window(max_items=2)
    first = window.add(text("alpha")).item
    second = window.add(text("beta")).item
    window.set_stale(first.id, True)
    window.set_stale(second.id, True)
    window.set_stale(second.id, True)
    assert window.stale_count == 2
    refreshed = window.add(text("beta")).item  # re-adding makes it fresh again
    assert refreshed.id == second.id and not refreshed.stale
    assert window.stale_count == 1
    window.add(text("gamma"))  # evicts the stale "alpha"
    assert window.stale_count == 0
    assert_accounting(window)
