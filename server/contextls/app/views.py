"""How items show their source: whole, or as their outlines (``contextls expand`` and
``contextls outline``; ``add --outline``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import replace

from contextls.app import protocol_views as wire
from contextls.app.changes import Change
from contextls.app.following import Following
from contextls.app.workspace_state import WorkspaceState
from contextls.core.candidates import Candidate
from contextls.core.costs import OFF_LOOP_CHARS
from contextls.core.errors import ContextError
from contextls.core.items import VIEW, Item, is_outlined
from contextls.core.outlines import (
    WHOLE_TOKENS,
    can_outline,
    outline_text,
    outlined_if,
    take_outlined,
)
from contextls.protocol import ErrorCode, SetViewResult


class Viewing:
    """How items show their source: whole, or as their outlines."""

    def __init__(self, state: WorkspaceState, follower: Following) -> None:
        self.state = state
        self.follower = follower
        self._said: list[str] = []
        # With compaction: outline, the window shows an old file as its outline before it
        # evicts anything for tokens.
        state.window.outline_of = lambda item: outlined_if(state.settings.compaction, item)
        state.before_save.append(self.before_save)
        state.after_save.append(self.after_save)

    def before_save(self, change: Change) -> None:
        """What a change showed as outlines is saved with it (and told once saved). An
        item archived while shown as its outline is archived whole: a view is how an
        item is shown, the archive keeps what shows it whole again (and search reads it)."""
        self._said = take_outlined(self.state.window, change.touch)
        for item_id, (item, reason) in list(change.archived.items()):
            if is_outlined(item) and item_id not in self.state.window:
                change.archived[item_id] = (replace(item, content=self._whole_text(item)), reason)

    def after_save(self, change: Change) -> None:
        said, self._said = self._said, []
        for message in said:
            self.state.warn(message)

    def _whole_text(self, item: Item) -> str:
        """What an outlined item shows the outline of, as its source holds it now (its
        outline follows the source); the outline itself when the source is gone."""
        try:
            return self.follower.current_text(item)
        except ContextError:
            return item.content

    def outlined_candidate(self, candidate: Candidate, or_whole: bool = False) -> Candidate:
        """A file to add as its outline; one with nothing to hide is refused (or, with
        ``or_whole``, added whole)."""
        probe = Item("", candidate.kind, candidate.content, candidate.metadata, 0, 0)
        return self.outlined_as(candidate, outline_text(candidate.content, probe), or_whole)

    def outlined_as(
        self, candidate: Candidate, shown: str | None, or_whole: bool = False
    ) -> Candidate:
        """``candidate`` shown as ``shown``, its outline made elsewhere (a worker)."""
        probe = Item("", candidate.kind, candidate.content, candidate.metadata, 0, 0)
        if shown is None and or_whole:
            return candidate
        if shown is None:
            raise ContextError(
                f"{probe.label} has no outline here: its language is not parsed, or it "
                "defines nothing with a body to hide",
                ErrorCode.NO_STRUCTURE,
            )
        whole = self.state.tokenizer.count(candidate.content)
        metadata = {**candidate.metadata, VIEW: "outline", WHOLE_TOKENS: whole}
        return replace(candidate, content=shown, metadata=metadata)

    def set_view(self, ids: list[str], view: str) -> SetViewResult | Awaitable[SetViewResult]:
        """Show items whole again, or as their outlines; a whole file makes room as an
        add does (announced). Sources of ``OFF_LOOP_CHARS`` or more are outlined and
        counted in a worker thread (an awaitable of the answer), and the change looks the
        counts up (more text than the tokenizer remembers would be counted again)."""
        sources, asked = self._sources(ids, view)
        if sum(len(source) for _, source in sources) < OFF_LOOP_CHARS:
            return self._show(view, *self._shown(sources, view, asked))

        async def shown_off_the_loop() -> SetViewResult:
            shown = await asyncio.to_thread(self._shown, sources, view, asked)
            return self._show(view, *shown)

        return shown_off_the_loop()

    def _sources(self, ids: list[str], view: str) -> tuple[list[tuple[Item, str]], int]:
        """The items whose view changes, with the source each shows (read now); and how
        many items ``ids`` named."""
        found: list[tuple[Item, str]] = []
        named = self.state.resolve(ids)[0]
        for item_id in named:
            item = self.state.window.get(item_id)
            if (view == "outline") == is_outlined(item):
                continue
            if not can_outline(item):
                raise ContextError(
                    f"{item.id} ({item.label}) is not a file or a class: it has no outline",
                    ErrorCode.INVALID_PARAMS,
                )
            found.append((item, self.follower.current_text(item)))
        return found, len(named)

    def _shown(
        self, sources: list[tuple[Item, str]], view: str, asked: int
    ) -> tuple[list[tuple[str, str]], list[Item], dict[str, int]]:
        """Each item's text in ``view``; the items to show as their outlines that have
        nothing to hide (refused when that is each of the ``asked``); and what each text
        takes, counted as the window will count it. Thread-safe."""
        wanted: list[tuple[str, str]] = []
        kept_whole: list[Item] = []
        counted: dict[str, int] = {}
        for item, source in sources:
            shown = source if view == "whole" else outline_text(source, item)
            if shown is None:
                kept_whole.append(item)
                continue
            probe = Item(
                item.id,
                item.kind,
                shown,
                _viewed(item, view),
                0,
                0,
                encoding=self.state.tokenizer.encoding,
            )
            piece, tokens = self.state.window.costs.counted_body(probe)
            counted[piece] = tokens
            wanted.append((item.id, shown))
        if kept_whole and len(kept_whole) == asked:
            first = kept_whole[0]
            raise ContextError(
                f"{first.id} ({first.label}) has nothing to hide: its outline is all of it"
                if len(kept_whole) == 1
                else f"none of the {len(kept_whole)} items has anything to hide: each one's "
                f"outline is all of it ({first.id} {first.label}, …)",
                ErrorCode.NO_STRUCTURE,
            )
        return wanted, kept_whole, counted

    def _show(
        self,
        view: str,
        wanted: list[tuple[str, str]],
        kept_whole: list[Item],
        counted: dict[str, int],
    ) -> SetViewResult:
        def apply(change: Change) -> tuple[list[Item], list[Item]]:
            done = []
            for item_id, shown in wanted:
                item = self.state.window.get(item_id)
                change.touch(item)
                item.metadata = _viewed(item, view)  # first: the heading says it, and counts
                change.record_evictions(self.state.window.replace_content(item_id, shown))
                if item.stale:
                    self.state.window.set_stale(item_id, False)
                done.append(item)
            return done, [eviction.item for eviction in change.evictions]

        with self.state.tokenizer.consulting(counted):
            changed, evicted = self.state.change(apply) if wanted else ([], [])
        return SetViewResult(
            items=[wire.context_item(item) for item in changed if item.id in self.state.window],
            evicted=[wire.context_item(item) for item in evicted],
            status=self.state.status(),
            kept_whole=[wire.context_item(item) for item in kept_whole],
        )


def _viewed(item: Item, view: str) -> dict[str, object]:
    """``item``'s metadata once it shows ``view``."""
    kept = {k: v for k, v in item.metadata.items() if k not in (VIEW, WHOLE_TOKENS)}
    if view == "outline":
        kept.update({VIEW: "outline", WHOLE_TOKENS: item.tokens})
    return kept
