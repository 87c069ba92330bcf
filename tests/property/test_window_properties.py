"""Window invariants under random operation sequences (hypothesis stateful testing).

Each step adds (text, code regions of a few files, whole files), pins, unpins,
removes, clears or changes the limits. Refusals are allowed but must change
nothing. After every step: count <= maxItems, tokens <= maxTokens, totals are
the sum of the items, chronological order, pinned items never evicted, ids
unique and never reused, and the dedup rules hold (no two items for touching
ranges of one file, no region beside its whole file, no duplicate texts).
Evictions are checked against a reference of both policies.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from contextls.core.errors import ContextError, ItemTooLarge, NoRoom, UnknownItem
from contextls.core.items import Item, split_lines
from contextls.core.window import AddOutcome, Candidate, Limits, Window
from contextls.protocol import EvictionPolicy, ItemKind

PATHS = ("a.py", "b.py", "c.py")
TEXT_KINDS: tuple[ItemKind, ...] = ("text", "error", "repl-history", "custom")
POLICIES: tuple[EvictionPolicy, ...] = ("fifo", "relevance")
HOUR_MS = 3_600_000

# Seed 003's score, written out independently of contextls.core.relevance.
KIND_WEIGHT = {
    "error": 1.0,
    "code": 0.5,
    "file": 0.5,
    "text": 0.3,
    "repl-history": 0.2,
    "custom": 0.0,
}


def words(text: str) -> int:
    """One token per word of an item's text; the render's markup (lines that start with
    ``#`` or a backtick: headings, fences) is free here (``test_costs.py`` counts it)."""
    return sum(len(line.split()) for line in text.splitlines() if not line.startswith(("#", "`")))


def reference_score(kind: str, timestamp: int, now: int) -> float:
    age_hours = max(0, now - timestamp) / HOUR_MS
    return min(1.0, 0.3 * math.exp(-age_hours / 24.0) + KIND_WEIGHT[kind])


def id_number(item_id: str) -> int:
    match = re.fullmatch(r"ctx-([0-9]+)", item_id)
    assert match, item_id
    return int(match.group(1))


def touching(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] <= b[1] + 1 and b[0] <= a[1] + 1


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000_000

    def __call__(self) -> int:
        return self.now


Snapshot = tuple[Any, ...]
Entry = tuple[str, str, int, bool, int]
"""What eviction looks at: id, kind, tokens, pinned, timestamp."""


def entry(item: Item) -> Entry:
    return (item.id, item.kind, item.tokens, item.pinned, item.timestamp)


def snapshot(window: Window) -> Snapshot:
    return (
        [
            (i.id, i.kind, i.content, dict(i.metadata), i.tokens, i.pinned, i.seq, i.timestamp)
            for i in window
        ],
        window.tokens,
        window.pinned_count,
        window.pinned_tokens,
        window.next_id,
        window.next_seq,
        window.limits,
    )


class WindowMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.clock = Clock()
        self.window = Window(Limits(), words, self.clock, "words")
        self.issued: set[str] = set()
        self.max_issued = 0
        self.pinned: set[str] = set()
        self.version = 0

    @initialize(
        max_items=st.integers(1, 20),
        max_tokens=st.integers(1, 200),
        policy=st.sampled_from(POLICIES),
    )
    def set_limits(self, max_items: int, max_tokens: int, policy: EvictionPolicy) -> None:
        self.window.reconfigure(Limits(max_items, max_tokens, policy))

    # ---------------------------------------------------------------- adding

    @rule(
        kind=st.sampled_from(TEXT_KINDS),
        size=st.integers(1, 60),
        tag=st.integers(0, 2),
        pin=st.booleans(),
    )
    def add_text(self, kind: ItemKind, size: int, tag: int, pin: bool) -> None:
        # Few distinct texts, so identical ones come back and must be refreshed.
        content = " ".join([f"w{tag}"] * size)
        candidate = Candidate(kind, content, {}, pin)
        same = next((i for i in self.window if i.kind == kind and i.content == content), None)
        tokens = words(content)
        leaving_pinned = same is not None and same.pinned
        pinned_count = self.window.pinned_count - int(leaving_pinned)
        pinned_tokens = self.window.pinned_tokens - (same.tokens if same and same.pinned else 0)
        limits = self.window.limits
        too_large = tokens > limits.max_tokens
        no_room = not too_large and (
            pinned_count + 1 > limits.max_items or pinned_tokens + tokens > limits.max_tokens
        )
        outcome = self._add(candidate)
        if too_large:
            assert isinstance(outcome, ItemTooLarge)
        elif no_room:
            assert isinstance(outcome, NoRoom)
        else:
            assert isinstance(outcome, AddOutcome), outcome
            assert outcome.created == (same is None)
            if same is not None:
                assert outcome.item.id == same.id

    @rule(
        path=st.sampled_from(PATHS),
        start=st.integers(1, 30),
        length=st.integers(1, 6),
        words_per_line=st.integers(1, 3),
        newline=st.booleans(),
        symbol=st.none() | st.sampled_from(["main", "helper"]),
        pin=st.booleans(),
    )
    def add_region(
        self,
        path: str,
        start: int,
        length: int,
        words_per_line: int,
        newline: bool,
        symbol: str | None,
        pin: bool,
    ) -> None:
        self.version += 1
        end = start + length - 1
        lines = [
            " ".join([f"{path}:{n}:v{self.version}"] + ["x"] * (words_per_line - 1))
            for n in range(start, end + 1)
        ]
        content = "\n".join(lines) + ("\n" if newline else "")
        metadata: dict[str, Any] = {"path": path, "startLine": start, "endLine": end}
        if symbol is not None:
            metadata["symbol"] = symbol
        whole = next((i for i in self.window.items_for_path(path) if i.is_whole_file), None)
        outcome = self._add(Candidate("code", content, metadata, pin))
        if not isinstance(outcome, AddOutcome):
            return
        if whole is not None:
            # A region of a file that is whole in the window refreshes the file.
            assert outcome.item.id == whole.id and not outcome.created
            assert outcome.item.kind == "file" and outcome.item.content == whole.content
            assert outcome.absorbed == []
            return
        item = outcome.item
        expected: dict[int, str] = {}
        for old in sorted(outcome.absorbed, key=lambda i: i.seq):
            span = old.lines
            assert span is not None and old.path == path
            expected.update(zip(range(span[0], span[1] + 1), split_lines(old.content), strict=True))
        expected.update(zip(range(start, end + 1), lines, strict=True))
        first, last = min(expected), max(expected)
        assert item.lines == (first, last)
        assert split_lines(item.content) == [expected[n] for n in range(first, last + 1)]
        assert sorted(expected) == list(range(first, last + 1))  # no holes
        if (first, last) != (start, end):
            assert "symbol" not in item.metadata

    @rule(path=st.sampled_from(PATHS), size=st.integers(1, 40), pin=st.booleans())
    def add_file(self, path: str, size: int, pin: bool) -> None:
        self.version += 1
        regions = {i.id for i in self.window.items_for_path(path) if i.is_region}
        whole = next((i for i in self.window.items_for_path(path) if i.is_whole_file), None)
        content = " ".join([f"{path}:v{self.version}"] * size)
        outcome = self._add(Candidate("file", content, {"path": path}, pin))
        if not isinstance(outcome, AddOutcome):
            return
        assert {i.id for i in outcome.absorbed} == regions
        assert outcome.created == (whole is None)
        if whole is not None:
            assert outcome.item.id == whole.id
        assert outcome.item.content == content

    def _add(self, candidate: Candidate) -> AddOutcome | ContextError:
        window = self.window
        before = snapshot(window)
        order = [entry(i) for i in window]
        pinned_before = {i.id for i in window if i.pinned}
        try:
            outcome = window.add(candidate)
        except ContextError as error:
            assert snapshot(window) == before
            event(f"add refused: {type(error).__name__}")
            return error
        item = outcome.item
        ids_before = [entry[0] for entry in order]
        ids_now = [i.id for i in window]
        absorbed = {i.id for i in outcome.absorbed}
        evicted = [e.item.id for e in outcome.evicted]

        assert ids_now[-1] == item.id  # the new or refreshed item is the newest
        event(
            "add: merged" if absorbed else "add: created" if outcome.created else "add: refreshed"
        )
        if outcome.evicted:
            event(f"add evicted ({window.limits.policy})")
        if outcome.created:
            assert item.id not in self.issued
            assert id_number(item.id) > self.max_issued
            self.issued.add(item.id)
            self.max_issued = id_number(item.id)
        else:
            assert item.id in ids_before
        assert outcome.deduplicated == (not outcome.created or bool(absorbed))
        assert item.id not in absorbed and item.id not in evicted
        assert absorbed <= set(ids_before)
        assert not absorbed & set(evicted)
        # Every item that left was absorbed or evicted; nothing else moved out.
        assert set(ids_before) - set(ids_now) == absorbed | set(evicted)
        # Pinned items leave only by being absorbed, and then the new item is pinned.
        assert not pinned_before & set(evicted)
        if (pinned_before & absorbed) or candidate.pin:
            assert item.pinned
        if not outcome.created and item.id in pinned_before:
            assert item.pinned
        assert item.tokens == words(item.content)

        # Evictions follow the policy: replay them on the pre-add order.
        new_entry = entry(item)
        remaining = [e for e in order if e[0] not in absorbed and e[0] != item.id]
        remaining.append(new_entry)
        assert [(e.item.id, e.reason) for e in outcome.evicted] == self._replay_evictions(
            remaining, protect=item.id
        )

        self.pinned -= absorbed
        if item.pinned:
            self.pinned.add(item.id)
        return outcome

    def _replay_evictions(self, entries: list[Entry], protect: str | None) -> list[tuple[str, str]]:
        limits = self.window.limits
        entries = list(entries)
        total = sum(e[2] for e in entries)
        expected: list[tuple[str, str]] = []
        while len(entries) > limits.max_items or total > limits.max_tokens:
            reason = "maxItems" if len(entries) > limits.max_items else "maxTokens"
            victim = self._reference_victim(entries, protect)
            assert victim is not None, "a pinned item would have to go"
            entries.remove(victim)
            total -= victim[2]
            expected.append((victim[0], reason))
        return expected

    def _reference_victim(self, entries: list[Entry], protect: str | None) -> Entry | None:
        choices = [e for e in entries if not e[3] and e[0] != protect]
        if not choices:
            return None
        if self.window.limits.policy == "fifo":
            return choices[0]
        now = self.clock.now
        # min() keeps the first of equal scores: ties go to the oldest.
        return min(choices, key=lambda e: reference_score(e[1], e[4], now))

    # -------------------------------------------------------------- changing

    @precondition(lambda self: len(self.window) > 0)
    @rule(data=st.data(), pinned=st.booleans())
    def set_pinned(self, data: st.DataObject, pinned: bool) -> None:
        item_id = data.draw(st.sampled_from([i.id for i in self.window]))
        order = [i.id for i in self.window]
        item = self.window.set_pinned(item_id, pinned)
        assert item.pinned == pinned
        assert [i.id for i in self.window] == order  # pinning never reorders
        if pinned:
            self.pinned.add(item_id)
        else:
            self.pinned.discard(item_id)

    @precondition(lambda self: len(self.window) > 0)
    @rule(data=st.data(), unknown=st.booleans())
    def remove(self, data: st.DataObject, unknown: bool) -> None:
        present = [i.id for i in self.window]
        chosen = data.draw(st.lists(st.sampled_from(present), min_size=1, max_size=3))
        if unknown:
            before = snapshot(self.window)
            try:
                self.window.remove([*chosen, f"ctx-{self.max_issued + 1000}"])
            except UnknownItem:
                assert snapshot(self.window) == before
                return
            raise AssertionError("removing an unknown id must be refused")
        removed = self.window.remove(chosen)
        assert [i.id for i in removed] == list(dict.fromkeys(chosen))
        assert [i.id for i in self.window] == [i for i in present if i not in set(chosen)]
        self.pinned -= set(chosen)

    @rule(keep_pinned=st.booleans())
    def clear(self, keep_pinned: bool) -> None:
        pinned_ids = [i.id for i in self.window if i.pinned]
        gone = self.window.clear(keep_pinned)
        if keep_pinned:
            assert [i.id for i in self.window] == pinned_ids
            assert not any(i.pinned for i in gone)
        else:
            assert len(self.window) == 0
            self.pinned.clear()

    @rule(
        max_items=st.integers(1, 20),
        max_tokens=st.integers(1, 200),
        policy=st.sampled_from(POLICIES),
    )
    def reconfigure(self, max_items: int, max_tokens: int, policy: EvictionPolicy) -> None:
        window = self.window
        before = snapshot(window)
        order = [entry(i) for i in window]
        refuse = window.pinned_count > max_items or window.pinned_tokens > max_tokens
        limits = Limits(max_items, max_tokens, policy)
        try:
            evictions = window.reconfigure(limits)
        except NoRoom:
            assert refuse
            assert snapshot(window) == before
            return
        assert not refuse
        assert window.limits == limits
        assert [(e.item.id, e.reason) for e in evictions] == self._replay_evictions(
            order, protect=None
        )
        assert not {e.item.id for e in evictions} & self.pinned

    @rule(ms=st.integers(-60_000, 72 * HOUR_MS))
    def tick(self, ms: int) -> None:
        self.clock.now += ms  # may go back: timestamps must not

    # ------------------------------------------------------------ invariants

    @invariant()
    def budget_and_totals(self) -> None:
        window = self.window
        items = list(window)
        assert len(items) == len(window) <= window.limits.max_items
        assert window.tokens <= window.limits.max_tokens
        assert window.tokens == sum(i.tokens for i in items)
        assert window.pinned_count == sum(1 for i in items if i.pinned)
        assert window.pinned_tokens == sum(i.tokens for i in items if i.pinned)
        assert all(i.tokens == words(i.content) for i in items)

    @invariant()
    def chronological_order(self) -> None:
        items = list(self.window)
        stamps = [i.timestamp for i in items]
        seqs = [i.seq for i in items]
        assert stamps == sorted(stamps)
        assert all(a < b for a, b in itertools.pairwise(seqs))
        assert all(seq < self.window.next_seq for seq in seqs)

    @invariant()
    def pinned_items_stay(self) -> None:
        # Pinned ids leave only through remove, clear or absorption (tracked above).
        assert {i.id for i in self.window if i.pinned} == self.pinned

    @invariant()
    def ids_unique_and_issued(self) -> None:
        item_ids = [i.id for i in self.window]
        assert len(item_ids) == len(set(item_ids))
        assert set(item_ids) <= self.issued
        assert self.window.next_id > self.max_issued

    @invariant()
    def dedup_holds(self) -> None:
        by_path: dict[str, list[Item]] = {}
        texts: set[tuple[str, str]] = set()
        for item in self.window:
            if item.path is not None and item.kind in ("code", "file"):
                by_path.setdefault(item.path, []).append(item)
            else:
                key = (item.kind, item.content)
                assert key not in texts, f"duplicate {key}"
                texts.add(key)
        for path, items in by_path.items():
            files = [i for i in items if i.is_whole_file]
            regions = [i for i in items if i.is_region]
            assert len(files) <= 1, path
            if files:
                assert regions == [], f"{path}: regions beside the whole file"
            for n, a in enumerate(regions):
                for b in regions[n + 1 :]:
                    assert a.lines is not None and b.lines is not None
                    assert not touching(a.lines, b.lines), (path, a.lines, b.lines)

    @invariant()
    def next_eviction_follows_the_policy(self) -> None:
        entries = [entry(i) for i in self.window]
        expected = self._reference_victim(entries, protect=None)
        actual = self.window.next_eviction()
        assert (actual.id if actual else None) == (expected[0] if expected else None)


WindowMachine.TestCase.settings = settings(
    max_examples=200,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestWindowProperties = WindowMachine.TestCase
