"""One workspace folder's context: its window, its share of the store, its tokenizer.

A change runs while the service holds the store's write lock (see
``ContextService.begin``): change the window, bump the revision, and keep
what changed in ``pending`` and what to announce in ``News``. The service
writes every workspace's pending changes and commits them together a moment
later (group commit), so a request does not wait for SQLite, and then has
each workspace announce what the burst did. If a change fails half-way,
what earlier requests changed is written and the window is reloaded from the
store, so a failed request never leaves a change behind.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from contextls import wire
from contextls.core.errors import ContextError, InvalidParams, NotArchived
from contextls.core.items import Item
from contextls.core.languages import guess_language
from contextls.core.render import render, select
from contextls.core.text import slice_range
from contextls.core.tokens import Tokenizer
from contextls.core.window import AddOutcome, Candidate, Eviction, Limits, Window
from contextls.files import check_size, read_text_file, uri_to_path
from contextls.protocol import (
    AddResult,
    ClearResult,
    ContextItem,
    ErrorCode,
    EvictionReason,
    ItemKind,
    ListResult,
    PinResult,
    RemoveResult,
    RenderFormat,
    RenderResult,
    RestoreResult,
    SearchHit,
    SearchResult,
    Settings,
    Status,
)
from contextls.store import Store, WorkspaceRow

T = TypeVar("T")

Position = tuple[int, int]


class Listener(Protocol):
    def status_changed(self, status: Status) -> None: ...

    def evicted(self, workspace: str, items: list[ContextItem], reason: EvictionReason) -> None: ...


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(slots=True)
class Delta:
    """What one transaction changed, so only that is written."""

    touched: dict[str, None] = field(default_factory=dict)
    archive: dict[str, tuple[Item, str]] = field(default_factory=dict)
    unarchive: set[str] = field(default_factory=set)
    evictions: list[Eviction] = field(default_factory=list)
    mutated: bool = False

    def touch(self, item: Item) -> None:
        self.mutated = True
        self.touched[item.id] = None

    def to_archive(self, item: Item, reason: str) -> None:
        self.touch(item)
        self.archive[item.id] = (item, reason)
        self.unarchive.discard(item.id)

    def record(self, outcome: AddOutcome) -> None:
        self.touch(outcome.item)
        for item in outcome.absorbed:
            self.touch(item)
        for eviction in outcome.evicted:
            self.to_archive(eviction.item, eviction.reason)
            self.evictions.append(eviction)

    def record_evictions(self, evictions: list[Eviction]) -> None:
        for eviction in evictions:
            self.to_archive(eviction.item, eviction.reason)
            self.evictions.append(eviction)


@dataclass(slots=True)
class Pending:
    """What successful changes did since the last write to the store.

    Each item's last state is kept when its change succeeds (None: it left
    the window), so writing never reads a window that a failing change may
    have half changed.
    """

    items: dict[str, Item | None] = field(default_factory=dict)
    archive: dict[str, tuple[Item, str]] = field(default_factory=dict)
    unarchive: set[str] = field(default_factory=set)
    changed: bool = False
    """Something changed, if only the revision."""

    def absorb(self, delta: Delta, window: Window) -> int:
        """Add a successful change; returns how many archive entries it made."""
        self.changed = True
        for item_id in delta.touched:
            self.items[item_id] = window.get(item_id) if item_id in window else None
        for item_id in delta.unarchive:
            self.archive.pop(item_id, None)
            self.unarchive.add(item_id)
        archived = 0
        for item_id, entry in delta.archive.items():
            if item_id not in window:
                self.unarchive.discard(item_id)
                self.archive[item_id] = entry
                archived += 1
        return archived


@dataclass(slots=True)
class News:
    """What to tell the editors once the changes are committed."""

    evicted: dict[str, tuple[Item, EvictionReason]] = field(default_factory=dict)
    changed: bool = False

    def add(self, delta: Delta) -> None:
        self.changed = True
        for eviction in delta.evictions:
            self.evicted[eviction.item.id] = (eviction.item, eviction.reason)


class Workspace:
    def __init__(
        self,
        root_uri: str,
        root_path: Path,
        store: Store,
        settings: Settings,
        tokenizer: Tokenizer,
        listener: Listener,
        documents: Callable[[str], str | None],
        begin: Callable[[], None],
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.root_uri = root_uri
        self.root_path = root_path
        self.store = store
        self.settings = settings
        self.tokenizer = tokenizer
        self.listener = listener
        self.documents = documents
        self.begin = begin
        """Take the store's write lock before a change (the service's ``begin``)."""
        self.clock = clock
        self.window = Window(_limits(settings), tokenizer.count, clock, tokenizer.encoding)
        self.revision = 0
        self.evicted_total = 0
        self.archived_count = 0
        self.pending = Pending()
        """Changed since the last write to the store (see ``write_pending``)."""
        self._status: Status | None = None
        self._news = News()
        self._load()

    # ------------------------------------------------------------------ state

    def _load(self) -> None:
        self._status = None
        row = self.store.workspace(self.root_uri)
        self.window.load(self.store.load_window(self.root_uri), row.next_id, row.next_seq)
        self.window.last_evicted.clear()
        self.window.last_evicted.extend(
            self.store.last_evicted(self.root_uri, self.window.last_evicted.maxlen or 5)
        )
        self.revision = row.revision
        self.evicted_total = row.evicted_total
        self._counters = row
        self.archived_count = self.store.archived_count(self.root_uri)

    def catch_up(self) -> bool:
        """Reload if another process changed this workspace; True if it did."""
        if self.store.workspace(self.root_uri).revision == self.revision:
            return False
        self._load()
        return True

    def status(self) -> Status:
        # Built once per change: a change announces it and returns it too.
        if self._status is None:
            self._status = wire.status(
                self.root_uri,
                self.window,
                self.settings.encoding,
                self.revision,
                self.archived_count,
                self.evicted_total,
            )
        return self._status

    def _transaction(self, change: Callable[[Delta], T]) -> T:
        self.begin()
        delta = Delta()
        try:
            result = change(delta)
        except BaseException as error:
            if delta.mutated or not isinstance(error, ContextError):
                # The store is the truth: write what earlier changes did, then
                # drop what this one half did.
                self.write_pending()
                self._load()
            raise
        if delta.mutated:
            self._status = None
            self.revision += 1
            self.evicted_total += len(delta.evictions)
            # Window ids are never in the archive (restoring takes an item out),
            # so each item archived here is a new archive entry.
            archived = self.pending.absorb(delta, self.window)
            self.archived_count += archived - len(delta.unarchive)
            self._counters = WorkspaceRow(
                self.window.next_id, self.window.next_seq, self.revision, self.evicted_total
            )
            self._news.add(delta)
        return result

    def write_pending(self) -> None:
        """Write what changed since the last write, inside the service's transaction."""
        pending, self.pending = self.pending, Pending()
        if not pending.changed:
            return
        root = self.root_uri
        present = [item for item in pending.items.values() if item is not None]
        gone = [item_id for item_id, item in pending.items.items() if item is None]
        self.store.save_items(root, present)
        self.store.delete_items(root, gone)
        self.store.unarchive(root, pending.unarchive)
        at = self.clock()
        by_reason: dict[str, list[Item]] = {}
        for item, reason in pending.archive.values():
            by_reason.setdefault(reason, []).append(item)
        for reason, items in by_reason.items():
            self.store.archive(root, items, reason, at)
        self.store.save_workspace(root, self._counters)

    def reload(self) -> None:
        """Forget unwritten changes and read the window back (after a failed commit)."""
        self.pending = Pending()
        self._news = News()
        self._load()

    def announce(self) -> None:
        """Tell the listener what changed since the last announcement (after a commit).

        One burst of requests gives one status and one eviction notice per
        reason; an item evicted and brought back within the burst is not
        reported as gone.
        """
        news, self._news = self._news, News()
        if not news.changed:
            return
        by_reason: dict[EvictionReason, list[ContextItem]] = {}
        for item, reason in news.evicted.values():
            if item.id not in self.window:
                by_reason.setdefault(reason, []).append(wire.context_item(item))
        for reason, items in by_reason.items():
            self.listener.evicted(self.root_uri, items, reason)
        self.listener.status_changed(self.status())

    # ---------------------------------------------------------------- adding

    def add_region(
        self,
        uri: str,
        start: Position,
        end: Position,
        text: str | None = None,
        language: str | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
        symbol: str | None = None,
        symbol_kind: str | int | None = None,
    ) -> AddResult:
        path, rel = self.locate(uri)
        if end < start:
            raise InvalidParams("$.range", "the range ends before it starts")
        if any(item.is_whole_file for item in self.window.items_for_path(rel)):
            # The whole file is already context: refresh it rather than add a piece of it.
            return self.add_file(uri, language, metadata, pin)
        if text is None:
            source = self._file_text(uri, path, rel)
            piece = slice_range(source, start, end, rel)
            content, first, last = piece.content, piece.start_line, piece.end_line
        else:
            if not text.strip():
                raise InvalidParams("$.text", "the text is empty")
            check_size(len(text.encode()), rel, self.settings.max_file_bytes)
            content = text
            first = start[0] + 1
            last = end[0] if end[1] == 0 and end[0] > start[0] else end[0] + 1
        meta = {
            **(metadata or {}),
            "uri": uri,
            "path": rel,
            "startLine": first,
            "endLine": last,
            "language": language or _str(metadata, "language") or guess_language(rel),
        }
        if symbol is not None:
            meta["symbol"] = symbol
            meta["symbolKind"] = symbol_kind
        return self._add(Candidate("code", content, _compact(meta), pin))

    def add_file(
        self,
        uri: str,
        language: str | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
    ) -> AddResult:
        path, rel = self.locate(uri)
        content = self._file_text(uri, path, rel)
        meta = {
            **(metadata or {}),
            "uri": uri,
            "path": rel,
            "language": language or _str(metadata, "language") or guess_language(rel),
        }
        return self._add(Candidate("file", content, _compact(meta), pin))

    def add_text(
        self,
        kind: ItemKind,
        content: str,
        language: str | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
    ) -> AddResult:
        if not content.strip():
            raise InvalidParams("$.content", "the content is empty")
        meta = dict(metadata or {})
        if language:
            meta["language"] = language
        return self._add(Candidate(kind, content, meta, pin))

    def _add(self, candidate: Candidate) -> AddResult:
        def change(delta: Delta) -> AddOutcome:
            outcome = self.window.add(candidate)
            delta.record(outcome)
            return outcome

        outcome = self._transaction(change)
        return AddResult(
            item=wire.context_item(outcome.item),
            evicted=[wire.context_item(e.item) for e in outcome.evicted],
            deduplicated=outcome.deduplicated,
            status=self.status(),
            merged=[item.id for item in outcome.absorbed],
        )

    def _file_text(self, uri: str, path: Path, rel: str) -> str:
        text = self.documents(uri)
        if text is None:
            return read_text_file(path, rel, self.settings.max_file_bytes)
        check_size(len(text.encode()), rel, self.settings.max_file_bytes)
        return text

    def locate(self, uri: str) -> tuple[Path, str]:
        """The resolved path of ``uri`` and its path relative to the root (symlinks resolved)."""
        path = uri_to_path(uri).resolve()
        root = self.root_path
        if not path.is_relative_to(root):
            raise ContextError(
                f"{path} is outside the workspace folder {root}", ErrorCode.OUTSIDE_WORKSPACE
            )
        return path, path.relative_to(root).as_posix() or "."

    # --------------------------------------------------------------- changing

    def remove(self, ids: list[str]) -> RemoveResult:
        def change(delta: Delta) -> list[Item]:
            removed = self.window.remove(ids)
            for item in removed:
                delta.to_archive(item, "removed")
            return removed

        removed = self._transaction(change)
        return RemoveResult(removed=[item.id for item in removed], status=self.status())

    def pin(self, item_id: str, pinned: bool) -> PinResult:
        def change(delta: Delta) -> Item:
            item = self.window.set_pinned(item_id, pinned)
            delta.touch(item)
            return item

        item = self._transaction(change)
        return PinResult(item=wire.context_item(item), status=self.status())

    def clear(self, keep_pinned: bool) -> ClearResult:
        def change(delta: Delta) -> list[Item]:
            cleared = self.window.clear(keep_pinned)
            for item in cleared:
                delta.to_archive(item, "cleared")
            return cleared

        cleared = self._transaction(change)
        return ClearResult(
            cleared=len(cleared), cleared_ids=[item.id for item in cleared], status=self.status()
        )

    def restore(self, ids: list[str], pin: bool) -> RestoreResult:
        wanted = list(dict.fromkeys(ids))

        self.write_pending()  # earlier changes may have archived what is asked for

        def change(delta: Delta) -> tuple[list[Item], list[Item]]:
            found = self.store.archived(self.root_uri, wanted)
            missing = [item_id for item_id in wanted if item_id not in found]
            if missing:
                raise NotArchived(_not_archived_message(missing, self.window))
            restored: list[Item] = []
            for item_id in wanted:
                old = found[item_id]
                outcome = self.window.add(
                    Candidate(old.kind, old.content, old.metadata, pin or old.pinned, id=old.id)
                )
                delta.unarchive.add(item_id)
                delta.archive.pop(item_id, None)
                delta.record(outcome)
                restored.append(outcome.item)
            return restored, [eviction.item for eviction in delta.evictions]

        restored, evicted = self._transaction(change)
        return RestoreResult(
            items=[wire.context_item(item) for item in restored if item.id in self.window],
            evicted=[wire.context_item(item) for item in evicted if item.id not in self.window],
            status=self.status(),
        )

    def apply_settings(self, settings: Settings, tokenizer: Tokenizer) -> None:
        """New limits or encoding: evict at once (refused if pinned items alone break them)."""

        def change(delta: Delta) -> None:
            window = self.window
            if tokenizer.encoding != window.encoding:
                delta.mutated = True  # a refusal half-way then reloads from the store
                delta.record_evictions(window.retokenize(tokenizer.count, tokenizer.encoding))
                for item in window:
                    delta.touch(item)
            limits = _limits(settings)
            over = len(window) > limits.max_items or window.tokens > limits.max_tokens
            if limits != window.limits or over:
                delta.mutated = True
                delta.record_evictions(window.reconfigure(limits))

        self.write_pending()  # a refusal half-way reloads the window from the store
        previous = (self.settings, self.tokenizer)
        self.settings, self.tokenizer = settings, tokenizer
        self._status = None
        try:
            self._transaction(change)
        except BaseException:
            self.settings, self.tokenizer = previous
            self.window.limits = _limits(previous[0])
            self._status = None
            raise

    def document_changed(self, uri: str, text: str | None) -> None:
        """Mark this document's items stale (or fresh again) after an edit or save."""
        try:
            _, rel = self.locate(uri)
        except ContextError:
            return
        items = self.window.items_for_path(rel)
        if not items:
            return
        if text is None:
            try:
                text = read_text_file(self.root_path / rel, rel, self.settings.max_file_bytes)
            except ContextError:
                text = ""
        flips = [item for item in items if item.stale != (item.content not in text)]
        if not flips:
            return

        def change(delta: Delta) -> None:
            for item in flips:
                if item.id in self.window:
                    self.window.set_stale(item.id, not item.stale)
                    delta.touch(item)

        self._transaction(change)

    # ---------------------------------------------------------------- reading

    def list_items(self, kinds: Sequence[str] | None, limit: int | None) -> ListResult:
        chosen = select(list(self.window), kinds, limit)
        return ListResult(items=[wire.context_item(item) for item in chosen])

    def render(
        self,
        fmt: RenderFormat,
        kinds: Sequence[str] | None,
        limit: int | None,
        max_tokens: int | None,
        query: str | None,
    ) -> RenderResult:
        items = select(list(self.window), kinds, limit)
        history: list[Item] = []
        if query and query.strip():
            self.write_pending()
            history = [hit.item for hit in self.store.search(self.root_uri, query, 10, kinds)]
        rendered = render(items, fmt, self.tokenizer.count, max_tokens, history)
        return RenderResult(
            text=rendered.text,
            tokens=rendered.tokens,
            item_ids=rendered.item_ids,
            omitted_ids=rendered.omitted_ids,
            format=fmt,
            history_ids=rendered.history_ids,
        )

    def search(self, query: str, limit: int, kinds: Sequence[str] | None) -> SearchResult:
        self.write_pending()
        hits = self.store.search(self.root_uri, query, limit, kinds)
        return SearchResult(
            hits=[
                SearchHit(
                    item=wire.context_item(hit.item),
                    score=round(hit.score, 4),
                    snippet=hit.snippet,
                    archived_at=hit.archived_at,
                    reason=hit.reason,
                )
                for hit in hits
            ]
        )


def _limits(settings: Settings) -> Limits:
    return Limits(settings.max_items, settings.max_tokens, settings.eviction_policy)


def _str(metadata: dict[str, Any] | None, key: str) -> str | None:
    value = (metadata or {}).get(key)
    return value if isinstance(value, str) and value else None


def _compact(metadata: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in metadata.items() if value is not None}


def _not_archived_message(missing: list[str], window: Window) -> str:
    in_window = [item_id for item_id in missing if item_id in window]
    if in_window and len(in_window) == len(missing):
        verb = "is" if len(in_window) == 1 else "are"
        return f"{', '.join(in_window)} {verb} already in the window"
    return (
        f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not in the archive; "
        "search lists what is"
    )
