"""The archive's lifecycle for one workspace: retention, pruning, forgetting."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from contextls.app import protocol_views as wire
from contextls.app.changes import Change
from contextls.app.files import check_path_limits, resolve, uri_to_path
from contextls.app.workspace_state import WorkspaceState
from contextls.core.errors import ContextError, InvalidParams, cut
from contextls.core.items import Item
from contextls.protocol import (
    ErrorCode,
    ForgetResult,
)
from contextls.storage.store import Retention


class Lifecycle:
    """The archive's lifecycle: retention, pruning, forgetting."""

    def __init__(self, state: WorkspaceState) -> None:
        self.state = state

    @property
    def retention(self) -> Retention:
        settings = self.state.settings
        return Retention(
            settings.archive_max_items, settings.archive_max_bytes, settings.archive_max_age_days
        )

    def archive_over(self, now: int) -> bool:
        """The archive holds more than its retention settings allow (cheap to ask)."""
        keep = self.retention
        if keep.max_items and self.state.archived_count > keep.max_items:
            return True
        if keep.max_bytes and self.state.archive.bytes > keep.max_bytes:
            return True
        if keep.max_age_days:
            oldest = self.state.store.archive.oldest_archived_at(self.state.root_uri)
            return oldest is not None and oldest < now - keep.max_age_ms
        return False

    def prune(self, now: int, batch: int) -> int:
        """Delete the oldest archived items beyond the retention settings (at most ``batch``).

        A change like any other: the revision moves, the status says what went.
        """

        def apply(change: Change) -> int:
            count, _, _ = self.state.store.retention.prune(
                self.state.root_uri, self.retention, now, batch
            )
            if count:
                change.mutated = True
                change.archive_delta -= count
            return count

        return self.state.change(apply)

    def forget(
        self,
        ids: list[str] | None,
        query: str | None,
        dry_run: bool,
        paths: list[str] | None = None,
    ) -> ForgetResult:
        """Remove items for good: from the window and the archive, their text scrubbed."""
        if not ids and not paths and not (query and query.strip()):
            raise InvalidParams("$.ids", "say which items to forget: ids, paths or a query")
        in_window, in_archive = self._to_forget(ids or [], query)
        for rel in (self._relative(path) for path in paths or []):
            in_window += [
                item for item in self.state.window.items_for_path(rel) if item not in in_window
            ]
            in_archive += [
                item_id
                for item_id in self.state.store.index.archived_ids_of_paths(
                    self.state.root_uri, [rel]
                )
                if item_id not in in_archive
            ]
        gone = [
            *in_window,
            *self.state.store.archive.archived_summaries(self.state.root_uri, in_archive),
        ]
        forgotten = [wire.summary(item) for item in gone]
        if dry_run or not gone:
            return ForgetResult(forgotten=forgotten, status=self.state.status(), dry_run=dry_run)
        window_ids = [item.id for item in in_window]
        self.state.store.reserve.release_if_tight()  # the room a delete needs on a full disk

        def apply(change: Change) -> None:
            change.archive_delta -= self.state.store.archive.forget(self.state.root_uri, in_archive)
            for item in self.state.window.remove(window_ids):
                change.touch(item)  # its row is deleted, not archived
            change.mutated = True

        self.state.change(apply)
        self.state.window.last_evicted.clear()
        self.state.window.last_evicted.extend(
            self.state.store.archive.last_evicted(
                self.state.root_uri, self.state.window.last_evicted.maxlen or 5
            )
        )
        self.state.status_moved()
        return ForgetResult(forgotten=forgotten, status=self.state.status())

    def _relative(self, path: str) -> str:
        """A path as items name their file: relative to the root, ``/``-separated."""
        root = self.state.sources.root
        where = uri_to_path(path, "$.paths") if path.startswith("file:") else Path(path)
        if where.is_absolute():
            resolved = resolve(where) if where.exists() else where
            if not resolved.is_relative_to(root):
                raise ContextError(
                    f"{cut(path)} is outside the workspace folder {root}",
                    ErrorCode.OUTSIDE_WORKSPACE,
                )
            return resolved.relative_to(root).as_posix()
        check_path_limits(path, "$.paths")
        return PurePosixPath(path).as_posix()

    def _to_forget(self, ids: list[str], query: str | None) -> tuple[list[Item], list[str]]:
        in_window: list[Item] = []
        in_archive: list[str] = []
        if ids:
            wanted = self.state.resolve(ids)[0]
            archived = self.state.store.archive.archived(
                self.state.root_uri, [i for i in wanted if i not in self.state.window]
            )
            unknown = [i for i in wanted if i not in self.state.window and i not in archived]
            if unknown:
                raise ContextError(
                    f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} neither in the "
                    "window nor in the archive; nothing was forgotten",
                    ErrorCode.UNKNOWN_ITEM,
                )
            in_window = [self.state.window.get(i) for i in wanted if i in self.state.window]
            in_archive = [i for i in wanted if i in archived]
        if query and query.strip():
            words = [word.casefold() for word in query.split()]
            for item in self.state.window:
                text = f"{item.label}\n{item.content}".casefold()
                if all(word in text for word in words) and item not in in_window:
                    in_window.append(item)
            for item_id in self.state.store.index.archived_ids(self.state.root_uri, query):
                if item_id not in in_archive:
                    in_archive.append(item_id)
        return in_window, in_archive
