"""Following the files behind a window's items: live text, staleness, refresh."""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

from contextls.app import protocol_views as wire
from contextls.app.changes import Change
from contextls.app.files import read_in_this_request
from contextls.app.workspace_state import WorkspaceState, _where
from contextls.core.errors import (
    ContextError,
)
from contextls.core.follow import Follow, Seen, follow, lines_of_text
from contextls.core.items import STALE_REASON, Item, as_whole_lines
from contextls.core.text import lines_with_ends
from contextls.protocol import (
    ErrorCode,
    RefreshResult,
)

T = TypeVar("T")


class Following:
    """Following the files behind the window's items: live text, staleness, refresh."""

    def __init__(self, state: WorkspaceState) -> None:
        self.state = state
        self.seen: dict[str, Seen] = {}
        """The lines of each file with regions, as last followed, and their spans then."""
        # Every change goes through the state's one path: one that added or moved a
        # region says so there.
        state.after_change.append(self.after_change)

    def document_changed(self, uri: str) -> None:
        """An editor changed (or opened, or closed) this document: follow it soon."""
        try:
            _, rel = self.state.sources.locate(uri)
        except ContextError:
            return
        if self.state.window.items_for_path(rel):
            self.state.dirty.add(rel)

    def follow_files(self) -> None:
        """Bring items in line with their files: what editors changed, and what changed on
        disk since the last look (one stat per file; a file is read only when it changed)."""
        paths = set(self.state.watch.changed(self.state.window.paths()))
        paths.update(self.state.dirty)
        self.state.dirty.clear()
        self._follow(paths)

    def follow_edits(self) -> None:
        """Bring items in line with what editors sent since the last look, so that a
        request is answered with every edit its client sent before it."""
        if self.state.dirty:
            paths = set(self.state.dirty)
            self.state.dirty.clear()
            self._follow(paths)

    def _follow(self, paths: set[str]) -> None:
        plans, texts = self._plans(paths)
        if not plans:
            self._remember(texts)
            return

        def apply(change: Change) -> None:
            # Planned again under the write lock: another process may have got here first.
            plans, texts = self._plans(paths)
            for plan in plans:
                if plan.item_id not in self.state.window:
                    continue  # evicted by a file that grew, earlier in this change
                item = self.state.window.get(plan.item_id)
                change.touch(item)
                if plan.content is not None:
                    try:
                        change.record_evictions(
                            self.state.window.replace_content(item.id, plan.content)
                        )
                        # Text that arrives live is scanned as an add's is.
                        for found in self.state.note_secrets(item.id, _where(item), plan.content):
                            self.state.warn_secret(found)
                    except ContextError:  # the file outgrew the budget: keep what it was
                        if not item.stale:
                            change.record_evictions(
                                self.state.window.set_stale(item.id, True, "too large")
                            )
                        continue
                if plan.lines is not None:
                    change.record_evictions(self.state.window.move(item.id, plan.lines))
                if item.stale != plan.stale or plan.why is not None:
                    change.record_evictions(
                        self.state.window.set_stale(item.id, plan.stale, plan.why)
                    )
            self._remember(texts)

        self.state.change(apply)

    def after_change(self, change: Change) -> None:
        """A region just added (or moved by a merge) is where its file's lines are now:
        remember them, so that an edit before the next look still tells where it went."""
        for item_id in change.touched:
            if item_id not in self.state.window:
                continue
            item = self.state.window.get(item_id)
            span = item.lines
            rel = item.path
            if rel is not None:
                # Read by this request: the next look at the disk need not read it again.
                signature = read_in_this_request(self.state.sources.root / rel)
                if signature is not None:
                    self.state.watch.saw(rel, signature)
            if not item.is_region or span is None or rel is None or item.stale:
                continue
            seen = self.seen.get(rel)
            if seen is not None:
                if seen.spans.get(item_id) != span:
                    self.seen[rel] = Seen(seen.lines, {**seen.spans, item_id: span})
                continue
            found = self.state.sources.current(
                rel, item.metadata.get("uri"), self.state.settings.max_file_bytes
            )
            if isinstance(found, str):
                self._remember({rel: lines_of_text(found)})

    def _remember(self, texts: dict[str, list[str] | None]) -> None:
        """Keep each file's lines as followed, with the spans of its regions in them: the
        next change of the file says where a stale region's place went."""
        for rel, lines in texts.items():
            if lines is None:
                self.seen.pop(rel, None)
                continue
            spans = {
                item.id: span
                for item in self.state.window.items_for_path(rel)
                if item.is_region and (span := item.lines) is not None
            }
            self.seen[rel] = Seen(lines, spans)

    def _plans(self, paths: set[str]) -> tuple[list[Follow], dict[str, list[str] | None]]:
        plans: list[Follow] = []
        texts: dict[str, list[str] | None] = {}
        for rel in sorted(paths):
            items = self.state.window.items_for_path(rel)
            if items:
                found = self.state.sources.current(
                    rel, items[0].metadata.get("uri"), self.state.settings.max_file_bytes
                )
                if isinstance(found, str):
                    lines = lines_of_text(found) if any(i.is_region for i in items) else None
                    if lines is not None:
                        texts[rel] = lines
                    plans.extend(follow(items, found, seen=self.seen.get(rel), lines=lines))
                    continue
                texts[rel] = None
                if found.why == "outside" and any(not item.stale for item in items):
                    self.state.warn(
                        f"{rel} now leads outside the workspace folder (a symbolic link?); "
                        "its items keep the text they had and are marked stale"
                    )
                plans.extend(follow(items, None, found.why))
            else:
                texts[rel] = None
        return plans, texts

    def refresh(self, ids: list[str] | None) -> RefreshResult:
        """Read items again from their files: the given ones, or every stale one.

        Regions are read where they are now (what changed since the last look is
        followed first); one whose place cannot be told is refused, with nothing read.
        """
        self.follow_files()
        if ids:
            items = [self.state.window.get(item_id) for item_id in self.state.resolve(ids)[0]]
        else:
            items = [item for item in self.state.window if item.stale]
        lost = [item for item in items if item.stale and item.metadata.get(STALE_REASON) == "lost"]
        if lost:
            named = ", ".join(f"{item.id} ({item.label})" for item in lost)
            said = (
                "its text changed and so did the lines around it, so which lines it covers "
                "now cannot be told; add the region again, or remove it"
                if len(lost) == 1
                else "their text changed and so did the lines around them, so which lines "
                "they cover now cannot be told; add the regions again, or remove them"
            )
            raise ContextError(
                f"{named}: {said} (nothing was read again)",
                ErrorCode.INVALID_RANGE,
            )
        fresh: list[tuple[str, str]] = []
        for item in items:
            fresh.append((item.id, self.current_text(item)))

        kept: list[Item] = []

        def apply(change: Change) -> tuple[list[Item], list[Item]]:
            done: list[Item] = []
            for item_id, content in fresh:
                if item_id not in self.state.window:
                    continue
                item = self.state.window.get(item_id)
                if content == item.content and not item.stale:
                    done.append(item)  # read again and the same: its row stays as it is
                    continue
                change.touch(item)
                if content != item.content:
                    if item.stale:  # the text it had is archived (restorable), never lost
                        before = replace(item, id=self.state.window.new_id(), stale=False)
                        change.to_archive(before, "refreshed")
                        kept.append(before)
                    change.record_evictions(self.state.window.replace_content(item_id, content))
                    as_whole_lines(item)
                if item.stale:
                    change.record_evictions(self.state.window.set_stale(item_id, False))
                done.append(item)
            return done, [eviction.item for eviction in change.evictions]

        refreshed, evicted = self.state.change(apply) if fresh else ([], [])
        return RefreshResult(
            refreshed=[
                wire.context_item(item) for item in refreshed if item.id in self.state.window
            ],
            evicted=[wire.context_item(item) for item in evicted],
            archived=[wire.context_item(item) for item in kept],
            status=self.state.status(),
        )

    def current_text(self, item: Item) -> str:
        """What the item's place in its file holds now (refused if that place is gone)."""
        uri = item.metadata.get("uri")
        if not item.path or not isinstance(uri, str):
            raise ContextError(
                f"{item.id} is {item.kind} text, not from a file; there is nothing to re-read",
                ErrorCode.INVALID_RANGE,
            )
        path, rel = self.state.sources.locate(uri)
        text = self.state.sources.text(uri, path, rel, self.state.settings.max_file_bytes)
        span = item.lines
        if item.is_whole_file or span is None:
            return text
        lines = lines_with_ends(text)
        if span[1] > len(lines):
            raise ContextError(
                f"{item.label}: {rel} has {len(lines)} line{'' if len(lines) == 1 else 's'} now; "
                "remove the item or add the region again",
                ErrorCode.INVALID_RANGE,
            )
        piece = "".join(lines[span[0] - 1 : span[1]])
        return piece if item.content.endswith("\n") else piece.removesuffix("\n")
