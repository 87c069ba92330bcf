"""The sliding window of one workspace: item count and token budget, pins, dedup.

Invariants after every public call: count <= max_items, the markdown render's
tokens <= max_tokens, items in the order they last changed, pinned never evicted.
A call that would break one raises a ``ContextError`` before changing anything.

What is counted is what is rendered (``core.costs``): ``total`` is the count of the
window rendered in markdown, headings and fences included.

Costs: the window is an insertion-ordered dict (chronological), with a second
ordered dict of the unpinned ids, so FIFO eviction takes the oldest unpinned
item in O(1) and never copies the window. Token totals are kept incrementally;
an item is tokenized once, when it arrives or when its text changes.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, replace
from typing import Final

from contextls.core.candidates import Candidate
from contextls.core.costs import Costs
from contextls.core.duplicates import arriving
from contextls.core.errors import NoRoom, UnknownItem, thousands
from contextls.core.items import STALE_REASON, Item, StaleReason, make_label
from contextls.core.relevance import next_victim
from contextls.core.render import body_piece, heading_piece
from contextls.core.room import budget_for, check_limits, check_size
from contextls.protocol import (
    EvictionPolicy,
    EvictionReason,
    Settings,
    WindowSettings,
)

LAST_EVICTED_KEPT: Final = 5
LOW_WATER: Final = 0.8
"""Under ``stable`` limits, how full an add that needs room for tokens leaves the window:
the next adds then land after what is there, so a prompt cache keeps all of it (chosen
by bench 17, tests/bench/bench_cache.py)."""


_DEFAULTS: Final = Settings()


@dataclass(frozen=True, slots=True)
class Limits:
    """The window's bounds; the defaults are the settings' (protocol.Settings)."""

    max_items: int = _DEFAULTS.max_items
    max_tokens: int = _DEFAULTS.max_tokens
    policy: EvictionPolicy = _DEFAULTS.eviction_policy
    stable: bool = False
    """Order for a prompt cache (``renderOrder: stable``): an item that changes moves to
    the end, and an add that needs room for tokens makes it down to ``LOW_WATER`` of the
    budget, so the adds after it change only the end of a render."""

    @classmethod
    def of(cls, settings: Settings | WindowSettings) -> Limits:
        return cls(
            settings.max_items,
            settings.max_tokens,
            settings.eviction_policy,
            settings.render_order == "stable",
        )


@dataclass(frozen=True, slots=True)
class Eviction:
    item: Item
    reason: EvictionReason


@dataclass(slots=True)
class AddOutcome:
    item: Item
    evicted: list[Eviction]
    deduplicated: bool
    absorbed: list[Item]
    """Items the new one replaced: overlapping regions, or regions of a whole file."""
    created: bool
    """False when an existing item was refreshed in place (same id)."""


class Window:
    def __init__(
        self,
        limits: Limits,
        count_tokens: Callable[[str], int],
        now_ms: Callable[[], int],
        encoding: str = "",
    ) -> None:
        self.limits = limits
        self.encoding = encoding
        self.costs = Costs(count_tokens, encoding)
        self._now = now_ms
        self._items: dict[str, Item] = {}
        self._unpinned: dict[str, None] = {}
        self._by_path: dict[str, dict[str, None]] = {}
        self._by_text: dict[tuple[str, str], str] = {}
        self.tokens = 0
        self.pinned_tokens = 0
        self.pinned_count = 0
        self.stale_count = 0
        self.next_id = 1
        self.next_seq = 1
        self.last_evicted: deque[Item] = deque(maxlen=LAST_EVICTED_KEPT)
        self._last_timestamp = 0
        self.outline_of: Callable[[Item], str | None] | None = None
        """``compaction: outline``: an item's outline, shown before evicting for tokens."""
        self.outlined: list[Item] = []

    @property
    def capacity(self) -> int:
        """Tokens the items may take: the budget less the render's frame."""
        return self.limits.max_tokens - self.costs.frame

    @property
    def total(self) -> int:
        """Tokens of the window rendered in markdown: its items and, if any, the frame."""
        return self.tokens + self.costs.frame if self._items else 0

    # ------------------------------------------------------------------ reads

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Item]:
        return iter(self._items.values())

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._items

    def get(self, item_id: str) -> Item:
        try:
            return self._items[item_id]
        except KeyError:
            raise UnknownItem(
                f"{item_id} is not in the window (`contextls ls`, or your editor's item list, "
                "shows what is there; search finds archived items)"
            ) from None

    def items_for_path(self, path: str) -> list[Item]:
        return [self._items[i] for i in self._by_path.get(path, ())]

    def _same_text(self, kind: str, content: str) -> Item | None:
        same_id = self._by_text.get((kind, content))
        return self._items[same_id] if same_id else None

    def paths(self) -> list[str]:
        """The files that items of the window point into."""
        return list(self._by_path)

    def next_eviction(self) -> Item | None:
        """The item that would go first if the window had to make room now."""
        return self._victim(protect=())

    # ---------------------------------------------------------------- changes

    def add(self, candidate: Candidate, bulk: bool = False, grow_to: int = 0) -> AddOutcome:
        """Add (or refresh, or merge) an item and make room for it.

        ``bulk``: one of a set added as a whole. Only the item's own size is checked,
        and nothing is evicted: the caller checks that the whole set fits beside the
        pinned items, then calls ``evict_to_fit`` protecting the set. ``grow_to``: the
        most an adaptive budget may grow to take the item (``core.room``).
        """
        arrival = arriving(
            candidate, self.items_for_path, self._same_text, self.costs, self.encoding
        )
        same, absorbed, leaving = arrival.same, arrival.absorbed, arrival.leaving
        item = arrival.item
        if same is None:
            item.id = candidate.id or f"ctx-{self.next_id}"  # the id it gets, if it fits
        item.tokens = self.costs.of(item)
        if bulk:
            check_size(self, item.tokens, grow_to)
        else:
            budget = budget_for(self, item.tokens, leaving, grow_to)
            if budget != self.limits.max_tokens:  # an adaptive budget grows for it
                self.limits = replace(self.limits, max_tokens=budget)

        # Under stable limits an add that changes nothing of what the render shows keeps
        # the item's place there (a prompt cache keeps it); it is the newest to evict.
        unchanged = (
            self.limits.stable
            and same is not None
            and not absorbed
            and heading_piece(same) + body_piece(same) == heading_piece(item) + body_piece(item)
        )
        place = list(self._items).index(same.id) if unchanged and same is not None else -1
        for old in absorbed:
            self._detach(old)
        if same is not None:
            self._detach(same)
        elif candidate.id is None:
            self._allocate_id()
        item.timestamp = self._timestamp()
        item.seq = same.seq if unchanged and same is not None else self._allocate_seq()
        self._attach(item)
        if place >= 0:
            self._put_back(item, place)
        evicted = [] if bulk else self._evict_to_fit(protect=(item.id,), batch=True)
        return AddOutcome(
            item=item,
            evicted=evicted,
            deduplicated=same is not None or bool(absorbed),
            absorbed=absorbed,
            created=same is None,
        )

    def remove(self, ids: list[str]) -> list[Item]:
        """Take items out of the window (all of them, or none if one is unknown)."""
        items = [self.get(item_id) for item_id in dict.fromkeys(ids)]
        for item in items:
            self._detach(item)
        return items

    def set_pinned(self, item_id: str, pinned: bool) -> Item:
        """Pin or unpin; the heading says which, so its count changes by a token or two:
        ``evict_to_fit`` afterwards makes room if that goes over the budget. Refused
        (NoRoom) when the pinned items would no longer fit on their own."""
        item = self.get(item_id)
        if item.pinned == pinned:
            return item
        body = self.costs.body(item)
        item.pinned = pinned
        tokens = self.costs.heading(item) + body
        if pinned and self.pinned_tokens + tokens > self.capacity:
            item.pinned = False
            raise NoRoom(
                f"{item.id} takes {thousands(tokens)} tokens, and pinned items already use "
                f"{thousands(self.pinned_tokens)} of the {thousands(self.limits.max_tokens)}-token "
                "budget; unpin something or raise maxTokens"
            )
        self._set_tokens(item, tokens, pinned_before=not pinned)
        sign = 1 if pinned else -1
        self.pinned_count += sign
        self.pinned_tokens += sign * item.tokens
        if pinned:
            del self._unpinned[item_id]
        else:
            # Back among the unpinned at its place in time. This walks the
            # window once; pin changes are rare, adds are not.
            self._unpinned = {
                other_id: None for other_id, other in self._items.items() if not other.pinned
            }
        return item

    def clear(self, keep_pinned: bool) -> list[Item]:
        gone = [item for item in self._items.values() if not (keep_pinned and item.pinned)]
        for item in gone:
            self._detach(item)
        return gone

    def set_stale(
        self, item_id: str, stale: bool, why: StaleReason | None = None
    ) -> list[Eviction]:
        """Mark an item stale (and why, in ``metadata.staleReason``) or fresh again. Its
        heading says so (the model must not take old text for the file's): what the
        longer heading needs is made room for, never by evicting this item."""
        item = self._items[item_id]
        body = self.costs.body(item)
        self.stale_count += int(stale) - int(item.stale)
        item.stale = stale
        if stale and why is not None:
            item.metadata = {**item.metadata, STALE_REASON: why}
        elif not stale and STALE_REASON in item.metadata:
            item.metadata = {k: v for k, v in item.metadata.items() if k != STALE_REASON}
        self._set_tokens(item, self.costs.heading(item) + body)
        self._to_end(item)
        return self._evict_to_fit(protect=(item_id,), strict=False)

    def move(self, item_id: str, lines: tuple[int, int]) -> list[Eviction]:
        """A region's text is now at ``lines`` (1-based): lines came or went above it.
        The heading names the lines, so it is counted again."""
        item = self._items[item_id]
        body = self.costs.body(item)
        item.metadata = {**item.metadata, "startLine": lines[0], "endLine": lines[1]}
        item.label = make_label(item.kind, item.content, item.metadata)  # it names the lines
        self._set_tokens(item, self.costs.heading(item) + body)
        self._to_end(item)
        return self._evict_to_fit(protect=(item_id,), strict=False)

    def replace_content(self, item_id: str, content: str) -> list[Eviction]:
        """A whole file changed: its item takes the new text and its tokens are recounted.

        The budget then applies as for an add (other items may be evicted; this
        one is kept). Refused, with nothing changed, if the new text alone does
        not fit beside the pinned items.
        """
        item = self._items[item_id]
        changed = replace(item, content=content, tokens=0)
        tokens = self.costs.of(changed)
        budget_for(self, tokens, [item])
        self._unindex(item)
        item.content = content
        item.demand = -1
        item.body_tokens = changed.body_tokens
        self._set_tokens(item, tokens)
        item.encoding = self.encoding
        self._index(item)
        self._to_end(item)
        return self._evict_to_fit(protect=(item_id,), batch=True)

    def reconfigure(
        self, limits: Limits, token_reason: EvictionReason = "maxTokens"
    ) -> list[Eviction]:
        """Apply new limits, evicting at once. Refused if the pinned items alone break them.

        ``token_reason``: what an eviction for tokens is put down to (``budget``: the
        adaptive budget shrank)."""
        check_limits(self, limits.max_items, limits.max_tokens)
        self.limits = limits
        return self._evict_to_fit(protect=(), token_reason=token_reason)

    def recent(self, count: int) -> list[Item]:
        """The ``count`` newest items, oldest first (without walking the whole window)."""
        newest = list(itertools.islice(reversed(self._items.values()), count))
        newest.reverse()
        return newest

    def retokenize(self, count_tokens: Callable[[str], int], encoding: str) -> list[Eviction]:
        """Switch encodings: every item is counted once more, then the budget applies.

        Refused, with nothing changed, if the pinned items alone would not fit.
        """
        costs = Costs(count_tokens, encoding)
        recounted = {
            item.id: costs.of(replace(item, tokens=0))
            for item in self._items.values()
            if item.encoding != encoding
        }
        pinned_tokens = sum(
            recounted.get(item.id, item.tokens) for item in self._items.values() if item.pinned
        )
        if pinned_tokens > self.limits.max_tokens - costs.frame:
            raise NoRoom(
                f"in {encoding}, pinned items take {thousands(pinned_tokens)} tokens, more than "
                f"maxTokens {thousands(self.limits.max_tokens)}; unpin some first"
            )
        self.costs = costs
        self.encoding = encoding
        for item_id, tokens in recounted.items():
            item = self._items[item_id]
            item.body_tokens = -1
            self._set_tokens(item, tokens)
            item.encoding = encoding
        return self._evict_to_fit(protect=())

    def use(self, limits: Limits, count_tokens: Callable[[str], int], encoding: str) -> None:
        """Set limits and encoding without evicting or recounting (before ``load``)."""
        self.limits = limits
        if count_tokens is not self.costs.count or encoding != self.encoding:
            self.costs = Costs(count_tokens, encoding)
        self.encoding = encoding

    def load(self, items: list[Item], next_id: int, next_seq: int) -> None:
        """Replace the whole state with a persisted one (items in window order)."""
        self._items.clear()
        self._unpinned.clear()
        self._by_path.clear()
        self._by_text.clear()
        self.tokens = self.pinned_tokens = self.pinned_count = self.stale_count = 0
        for item in items:
            if item.encoding != self.encoding:  # another encoding, or counted another way
                item.tokens = self.costs.of(item)
                item.encoding = self.encoding
            else:
                self.costs.adopt(item)
            self._attach(item)
        # Never trust a counter below an id already in use.
        used = max((_id_number(item.id) for item in items), default=0)
        self.next_id = max(next_id, used + 1)
        self.next_seq = max(next_seq, max((item.seq for item in items), default=0) + 1)
        self._last_timestamp = max((item.timestamp for item in items), default=0)

    def evict_to_fit(self, protect: Collection[str]) -> list[Eviction]:
        """Evict until the limits hold, never an item of ``protect`` (a set added whole)."""
        return self._evict_to_fit(protect, batch=True)

    def new_id(self) -> str:
        """A fresh id (for an item that goes straight to the archive: an import)."""
        return self._allocate_id()

    # -------------------------------------------------------------- internals

    def _allocate_id(self) -> str:
        item_id = f"ctx-{self.next_id}"
        self.next_id += 1
        return item_id

    def _put_back(self, item: Item, place: int) -> None:
        """Put ``item`` (just attached, last) back at ``place`` in the window's order."""
        order = list(self._items.values())
        order.insert(place, order.pop())
        self._items = {each.id: each for each in order}

    def _to_end(self, item: Item) -> None:
        """Under ``stable`` limits, an item that changed is the newest: the end of a render
        (what changes lands at the end, so what comes before it stays byte for byte)."""
        if not self.limits.stable or item.id not in self._items:
            return
        del self._items[item.id]
        self._items[item.id] = item
        if item.id in self._unpinned:
            del self._unpinned[item.id]
            self._unpinned[item.id] = None
        item.seq = self._allocate_seq()

    def _allocate_seq(self) -> int:
        seq = self.next_seq
        self.next_seq += 1
        return seq

    def _timestamp(self) -> int:
        # Never go back in time, so window order is also timestamp order.
        self._last_timestamp = max(self._now(), self._last_timestamp)
        return self._last_timestamp

    def _attach(self, item: Item) -> None:
        self._items[item.id] = item
        self.tokens += item.tokens
        self.stale_count += item.stale
        if item.pinned:
            self.pinned_count += 1
            self.pinned_tokens += item.tokens
        else:
            self._unpinned[item.id] = None
        self._index(item)

    def _detach(self, item: Item) -> None:
        del self._items[item.id]
        self.tokens -= item.tokens
        self.stale_count -= item.stale
        if item.pinned:
            self.pinned_count -= 1
            self.pinned_tokens -= item.tokens
        else:
            del self._unpinned[item.id]
        self._unindex(item)

    def _index(self, item: Item) -> None:
        path = item.path
        if path is not None and item.is_ranged:
            self._by_path.setdefault(path, {})[item.id] = None
        else:
            self._by_text[(item.kind, item.content)] = item.id

    def _unindex(self, item: Item) -> None:
        path = item.path
        if path is not None and item.is_ranged:
            ids = self._by_path.get(path)
            if ids is not None:
                ids.pop(item.id, None)
                if not ids:
                    del self._by_path[path]
        elif self._by_text.get((item.kind, item.content)) == item.id:
            del self._by_text[(item.kind, item.content)]

    def _set_tokens(self, item: Item, tokens: int, pinned_before: bool | None = None) -> None:
        """``pinned_before``: whether the pinned total holds the item (default: its pin)."""
        delta = tokens - item.tokens
        item.tokens = tokens
        if item.id not in self._items:
            return
        self.tokens += delta
        if item.pinned if pinned_before is None else pinned_before:
            self.pinned_tokens += delta

    def _victim(self, protect: Collection[str]) -> Item | None:
        unpinned = (self._items[i] for i in self._unpinned if i not in protect)
        return next_victim(unpinned, self.limits.policy, self._now)

    def _evict_to_fit(
        self,
        protect: Collection[str],
        token_reason: EvictionReason = "maxTokens",
        strict: bool = True,
        batch: bool = False,
    ) -> list[Eviction]:
        """``strict=False``: a heading grown by a few tokens (stale, moved) with nothing
        left to evict stays over the budget; the file changed whatever the window says.
        ``batch``: an add that needs room for tokens under ``stable`` limits makes it down
        to ``LOW_WATER`` of the budget (one break of a render's prefix, not one per add)."""
        evicted: list[Eviction] = []
        max_items, capacity = self.limits.max_items, self.capacity
        down_to = capacity
        while True:
            reason: EvictionReason
            if len(self._items) > max_items:
                reason = "maxItems"
            elif self.tokens > down_to:
                reason = token_reason
                if batch and self.limits.stable:
                    down_to = min(down_to, int(capacity * LOW_WATER))
            else:
                return evicted
            if reason != "maxItems" and self._outline_one(protect):
                continue
            victim = self._victim(protect)
            if victim is None:
                if not strict or self.tokens <= capacity:  # within the budget, if not low
                    return evicted
                raise NoRoom("nothing left that may be evicted")  # core.room guards it
            self._detach(victim)
            self.last_evicted.append(victim)
            evicted.append(Eviction(victim, reason))

    def _outline_one(self, protect: Collection[str]) -> bool:
        """Show the oldest unpinned item that can shrink as its outline; False if none can."""
        for item_id in self._unpinned if self.outline_of is not None else ():
            item = self._items[item_id]
            shown = None if item_id in protect else self.outline_of(item)  # type: ignore[misc]
            view = {**item.metadata, "view": "outline", "wholeTokens": item.tokens}
            changed = replace(item, content=shown or "", metadata=view, tokens=0)
            if shown is not None and (tokens := self.costs.of(changed)) < item.tokens:
                item.metadata, item.content, item.demand = view, shown, -1
                item.body_tokens = changed.body_tokens
                self._set_tokens(item, tokens)
                self._to_end(item)
                self.outlined.append(item)
                return True
        return False


def _id_number(item_id: str) -> int:
    _, _, number = item_id.partition("-")
    return int(number) if number.isdigit() else 0
