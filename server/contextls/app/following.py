"""Following the files behind a window's items: live text, staleness, refresh."""

from __future__ import annotations

from contextls.app import protocol_views as wire
from contextls.app.changes import Change
from contextls.app.workspace_state import WorkspaceState, _where
from contextls.core.errors import (
    ContextError,
)
from contextls.core.follow import Follow, follow
from contextls.core.items import Item
from contextls.protocol import (
    ErrorCode,
    RefreshResult,
)


class Following(WorkspaceState):
    def document_changed(self, uri: str) -> None:
        """An editor changed (or opened, or closed) this document: follow it soon."""
        try:
            _, rel = self.sources.locate(uri)
        except ContextError:
            return
        if self.window.items_for_path(rel):
            self.dirty.add(rel)

    def follow_files(self) -> None:
        """Bring items in line with their files: what editors changed, and what changed on
        disk since the last look (one stat per file; a file is read only when it changed)."""
        paths = set(self.watch.changed(self.window.paths()))
        paths.update(self.dirty)
        self.dirty.clear()
        if paths and self._plans(paths):

            def apply(change: Change) -> None:
                # Planned again under the write lock: another process may have got here first.
                for plan in self._plans(paths):
                    if plan.item_id not in self.window:
                        continue  # evicted by a file that grew, earlier in this change
                    item = self.window.get(plan.item_id)
                    change.touch(item)
                    if plan.content is not None:
                        try:
                            change.record_evictions(
                                self.window.replace_content(item.id, plan.content)
                            )
                            # Text that arrives live is scanned as an add's is.
                            for warning in self.note_secrets(item.id, _where(item), plan.content):
                                self.warn(warning)
                        except ContextError:  # the file outgrew the budget: keep what it was
                            if not item.stale:
                                change.record_evictions(
                                    self.window.set_stale(item.id, True, "too large")
                                )
                            continue
                    if plan.lines is not None:
                        change.record_evictions(self.window.move(item.id, plan.lines))
                    if item.stale != plan.stale or plan.why is not None:
                        change.record_evictions(
                            self.window.set_stale(item.id, plan.stale, plan.why)
                        )

            self.change(apply)

    def _plans(self, paths: set[str]) -> list[Follow]:
        plans: list[Follow] = []
        for rel in sorted(paths):
            items = self.window.items_for_path(rel)
            if items:
                found = self.sources.current(
                    rel, items[0].metadata.get("uri"), self.settings.max_file_bytes
                )
                if isinstance(found, str):
                    plans.extend(follow(items, found))
                    continue
                if found.why == "outside" and any(not item.stale for item in items):
                    self.warn(
                        f"{rel} now leads outside the workspace folder (a symbolic link?); "
                        "its items keep the text they had and are marked stale"
                    )
                plans.extend(follow(items, None, found.why))
        return plans

    def refresh(self, ids: list[str] | None) -> RefreshResult:
        """Read items again from their files: the given ones, or every stale one."""
        if ids:
            items = [self.window.get(item_id) for item_id in self.resolve(ids)[0]]
        else:
            items = [item for item in self.window if item.stale]
        fresh: list[tuple[str, str]] = []
        for item in items:
            fresh.append((item.id, self._current_text(item)))

        def apply(change: Change) -> tuple[list[Item], list[Item]]:
            done: list[Item] = []
            for item_id, content in fresh:
                if item_id not in self.window:
                    continue
                item = self.window.get(item_id)
                change.touch(item)
                if content != item.content:
                    change.record_evictions(self.window.replace_content(item_id, content))
                if item.stale:
                    change.record_evictions(self.window.set_stale(item_id, False))
                done.append(item)
            return done, [eviction.item for eviction in change.evictions]

        refreshed, evicted = self.change(apply) if fresh else ([], [])
        return RefreshResult(
            refreshed=[wire.context_item(item) for item in refreshed if item.id in self.window],
            evicted=[wire.context_item(item) for item in evicted],
            status=self.status(),
        )

    def _current_text(self, item: Item) -> str:
        """What the item's place in its file holds now (refused if that place is gone)."""
        uri = item.metadata.get("uri")
        if not item.path or not isinstance(uri, str):
            raise ContextError(
                f"{item.id} is {item.kind} text, not from a file; there is nothing to re-read",
                ErrorCode.INVALID_RANGE,
            )
        path, rel = self.sources.locate(uri)
        text = self.sources.text(uri, path, rel, self.settings.max_file_bytes)
        span = item.lines
        if item.is_whole_file or span is None:
            return text
        lines = text.splitlines(keepends=True)
        if span[1] > len(lines):
            raise ContextError(
                f"{item.label}: {rel} has {len(lines)} lines now; remove the item or add the "
                "region again",
                ErrorCode.INVALID_RANGE,
            )
        piece = "".join(lines[span[0] - 1 : span[1]])
        return piece if item.content.endswith("\n") else piece.removesuffix("\n")
