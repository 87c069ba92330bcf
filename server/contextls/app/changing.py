"""Changing what a window holds: remove, clear, pin, restore."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import msgspec

from contextls.app import protocol_views as wire
from contextls.app.changes import Change
from contextls.app.workspace_state import WorkspaceState
from contextls.core.candidates import Candidate
from contextls.core.errors import (
    ItemTooLarge,
    NoRoom,
    NotArchived,
    thousands,
)
from contextls.core.items import VIEW, Item, is_outlined
from contextls.core.outlines import WHOLE_TOKENS, outline_text
from contextls.core.window import Window
from contextls.protocol import (
    ClearResult,
    PinResult,
    RemoveResult,
    RestoreResult,
)


class Changing:
    """Removing, clearing, pinning and restoring items."""

    def __init__(self, state: WorkspaceState) -> None:
        self.state = state

    def remove(self, ids: list[str]) -> RemoveResult:
        resolved, merged = self.state.resolve(ids)
        removed = self._to_archive(lambda: self.state.window.remove(resolved), "removed")
        return RemoveResult(
            removed=[item.id for item in removed], status=self.state.status(), merged=merged
        )

    def clear(self, keep_pinned: bool) -> ClearResult:
        cleared = self._to_archive(lambda: self.state.window.clear(keep_pinned), "cleared")
        return ClearResult(
            cleared=len(cleared),
            cleared_ids=[item.id for item in cleared],
            status=self.state.status(),
        )

    def clear_steps(self, keep_pinned: bool, step_bytes: int) -> list[list[str]]:
        """The ids a clear takes, oldest first, in steps of about ``step_bytes`` of text
        each (one step for a window holding less)."""
        steps: list[list[str]] = [[]]
        size = 0
        for item in self.state.window:
            if keep_pinned and item.pinned:
                continue
            if steps[-1] and size + len(item.content) > step_bytes:
                steps.append([])
                size = 0
            steps[-1].append(item.id)
            size += len(item.content)
        return [step for step in steps if step]

    def clear_step(self, ids: list[str], keep_pinned: bool) -> list[str]:
        """One step of a large clear: those of ``ids`` still in the window (and still not
        pinned, with ``keep_pinned``) archived as cleared; the ids archived."""
        window = self.state.window

        def take() -> list[Item]:
            wanted = [i for i in ids if i in window and not (keep_pinned and window.get(i).pinned)]
            return window.remove(wanted)

        return [item.id for item in self._to_archive(take, "cleared")]

    def cleared(self, ids: list[str]) -> ClearResult:
        return ClearResult(cleared=len(ids), cleared_ids=ids, status=self.state.status())

    def _to_archive(self, take: Callable[[], list[Item]], reason: str) -> list[Item]:
        """Take items out of the window (``take``) and archive them for ``reason``."""

        def apply(change: Change) -> list[Item]:
            taken = take()
            for item in taken:
                change.to_archive(item, reason)
            return taken

        return self.state.change(apply)

    def pin(self, item_id: str, pinned: bool) -> PinResult:
        (item_id,), merged = self.state.resolve([item_id])

        def apply(change: Change) -> Item:
            item = self.state.window.set_pinned(item_id, pinned)
            change.touch(item)
            # The heading says "pinned": a token or two more, which may need room.
            change.record_evictions(self.state.window.evict_to_fit(protect=(item_id,)))
            return item

        item, change = self.state.recorded_change(apply)
        return PinResult(
            item=wire.context_item(item),
            status=self.state.status(),
            merged=merged,
            evicted=self.state.evicted_by(change),
        )

    def restore(self, ids: list[str], pin: bool, dry_run: bool = False) -> RestoreResult:
        """Bring archived items back (their own ids), evicting to make room like an add.

        ``dry_run``: the same change, answered and rolled back (what would come back,
        what would go), so an editor can ask before evicting.
        """
        resolved, merged = self.state.resolve(ids)
        already = [item_id for item_id in resolved if item_id in self.state.window]
        wanted = [item_id for item_id in resolved if item_id not in self.state.window]
        if not wanted:  # nothing to bring back: say so, change nothing
            return RestoreResult(
                items=[],
                evicted=[],
                status=self.state.status(),
                already_in_window=already,
                merged=merged,
            )

        def apply(change: Change) -> RestoreResult:
            found = self.state.store.archive.archived(self.state.root_uri, wanted)
            missing = [item_id for item_id in wanted if item_id not in found]
            if missing:
                raise NotArchived(_not_archived_message(missing, self.state.window))
            restored: list[Item] = []
            for item_id in wanted:
                old = shown_again(found[item_id])
                try:
                    outcome = self.state.window.add(
                        Candidate(old.kind, old.content, old.metadata, pin or old.pinned, id=old.id)
                    )
                except (ItemTooLarge, NoRoom) as error:
                    raise type(error)(_no_room_to_restore(old, self.state.window, wanted)) from None
                change.restore(item_id)
                change.record(outcome)
                restored.append(outcome.item)
            evicted = [eviction.item for eviction in change.evictions]
            in_window = {item.id for item in self.state.window}
            return RestoreResult(
                items=[wire.context_item(item) for item in restored if item.id in in_window],
                evicted=[wire.context_item(item) for item in evicted if item.id not in in_window],
                status=wire.EMPTY_STATUS,
                already_in_window=already,
                merged=merged,
                dry_run=dry_run,
            )

        result = self.state.rehearse(apply) if dry_run else self.state.change(apply)
        return msgspec.structs.replace(result, status=self.state.status())


def shown_again(archived: Item) -> Item:
    """An archived item as it comes back: one archived from its outline comes back as its
    outline of the whole text the archive kept (whole, when that has nothing to hide)."""
    if not is_outlined(archived):
        return archived
    shown = outline_text(archived.content, archived)
    if shown is not None:
        return replace(archived, content=shown)
    kept = {k: v for k, v in archived.metadata.items() if k not in (VIEW, WHOLE_TOKENS)}
    return replace(archived, metadata=kept)


def _no_room_to_restore(item: Item, window: Window, wanted: list[str]) -> str:
    """Why ``item`` cannot come back, and what would let it; nothing was restored."""
    limits = window.limits
    others = [item_id for item_id in wanted if item_id != item.id]
    nothing = f"nothing was restored ({', '.join(others)} neither)" if others else "nothing changed"
    if item.tokens > window.capacity:
        return (
            f"{item.id} ({item.label}) has {thousands(item.tokens)} tokens, more than the whole "
            f"budget of {thousands(limits.max_tokens)}; raise maxTokens to bring it back; "
            f"{nothing}"
        )
    return (
        f"{item.id} ({item.label}, {thousands(item.tokens)} tokens) does not fit beside the "
        f"pinned items ({thousands(window.pinned_tokens)} of the "
        f"{thousands(limits.max_tokens)}-token budget, {window.pinned_count} of "
        f"{limits.max_items} places); unpin something or raise maxTokens; {nothing}"
    )


def _not_archived_message(missing: list[str], window: Window) -> str:
    in_window = [item_id for item_id in missing if item_id in window]
    if in_window and len(in_window) == len(missing):
        verb = "is" if len(in_window) == 1 else "are"
        return f"{', '.join(in_window)} {verb} already in the window"
    return (
        f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not in the archive; "
        "search lists what is"
    )
