"""The record of one change to a window: what to save, archive and announce.

A request changes the window in memory first (the window refuses before it
changes anything); what it changed is recorded here and then written to the
store inside the open write transaction, under a savepoint, before the next
request runs. The unit of work (``unit_of_work``) commits and announces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contextls.core.items import Item
from contextls.core.window import AddOutcome, Eviction
from contextls.protocol import WindowSettings


@dataclass(slots=True)
class Change:
    touched: dict[str, None] = field(default_factory=dict)
    """Ids whose row is saved (still in the window) or deleted (left it)."""
    archived: dict[str, tuple[Item, str]] = field(default_factory=dict)
    """Items that left the window for the archive, with why."""
    restored: set[str] = field(default_factory=set)
    """Ids taken out of the archive."""
    evictions: list[Eviction] = field(default_factory=list)
    mutated: bool = False
    """The window changed (if only an item's flags): the revision moves on."""
    settings: dict[str, Any] | None = None
    """The window's new chosen settings, to save with it."""
    new_settings: WindowSettings | None = None
    """The same settings, checked (a settings change saves the budget they imply)."""
    aliases: dict[str, str] = field(default_factory=dict)
    """Ids merged into another item: old -> new (they keep naming it)."""
    archive_delta: int = 0
    """Archive rows this change wrote or deleted itself (imported, pruned, forgotten)."""

    def touch(self, item: Item) -> None:
        self.mutated = True
        self.touched[item.id] = None

    def to_archive(self, item: Item, reason: str) -> None:
        self.touch(item)
        self.archived[item.id] = (item, reason)
        # An id restored earlier in this change keeps its place in ``restored``:
        # its old archive row goes before the new one is written.

    def restore(self, item_id: str) -> None:
        self.mutated = True
        self.restored.add(item_id)
        self.archived.pop(item_id, None)

    def record(self, outcome: AddOutcome) -> None:
        self.touch(outcome.item)
        for item in outcome.absorbed:
            self.touch(item)
            if item.id != outcome.item.id:
                self.aliases[item.id] = outcome.item.id
        self.record_evictions(outcome.evicted)

    def record_evictions(self, evictions: list[Eviction]) -> None:
        for eviction in evictions:
            self.to_archive(eviction.item, eviction.reason)
            self.evictions.append(eviction)
