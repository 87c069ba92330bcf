"""One workspace folder's context: its window, its rows in the store, its tokenizer.

Every change follows one path (``change``): join the write burst (which
holds the store's write lock), change the window in memory (the window
refuses before it changes anything), then write what the ``Change`` recorded
into the open transaction under a savepoint. If the change fails half-way,
the window is read back from the store, which holds exactly the changes that
succeeded before it. The burst commits before the answers leave (``burst``).

Reading (list, render, status, search) takes no lock.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from contextls.app import protocol_views as wire
from contextls.app import searching
from contextls.app.changes import Change
from contextls.app.files import check_size
from contextls.app.settings import WINDOW_KEYS, chosen_of, window_settings
from contextls.app.sources import Documents, FileWatch, Sources
from contextls.app.unit_of_work import WriteBurst
from contextls.core import adaptive, candidates
from contextls.core.errors import (
    ContextError,
    InvalidParams,
    ItemTooLarge,
    NoRoom,
    NotArchived,
    thousands,
)
from contextls.core.follow import Follow, follow
from contextls.core.items import Item
from contextls.core.render import render, select
from contextls.core.secrets import secret_warnings
from contextls.core.text import Position, check_range, display_lines, slice_range
from contextls.core.tokens import Tokenizer
from contextls.core.window import AddOutcome, Candidate, Limits, Window
from contextls.protocol import (
    AddResult,
    ClearResult,
    ConfigureResult,
    ErrorCode,
    ForgetResult,
    ItemKind,
    ListResult,
    Omission,
    PinResult,
    RefreshResult,
    RemoveResult,
    RenderFormat,
    RenderResult,
    RestoreResult,
    SearchResult,
    SemanticStatus,
    Status,
    WindowSettings,
)
from contextls.storage.rescue import WindowInMemory
from contextls.storage.store import ArchiveState, Retention, StorageError, Store, WorkspaceRow

T = TypeVar("T")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Workspace:
    def __init__(
        self,
        root_uri: str,
        root_path: Path,
        store: Store,
        burst: WriteBurst,
        tokenizers: Callable[[str], Tokenizer],
        documents: Documents,
        clock: Callable[[], int] = now_ms,
        warn: Callable[[str], None] = lambda message: None,
    ) -> None:
        self.root_uri = root_uri
        self.warn = warn
        """Tell every client's person (window/showMessage): what the follow found."""
        self.store = store
        self.burst = burst
        self.tokenizers = tokenizers
        self.chosen: dict[str, Any] = {}
        """The settings chosen for this window (camelCase keys); the rest are defaults."""
        self.settings = WindowSettings()
        self.tokenizer = tokenizers(self.settings.encoding)
        self.sources = Sources(root_path, documents)
        self.watch = FileWatch(root_path)
        self.dirty: set[str] = set()
        """Files an editor changed since the items were last brought in line with them."""
        self.clock = clock
        self.window = Window(
            Limits.of(self.settings), self.tokenizer.count, clock, self.tokenizer.encoding
        )
        self.revision = 0
        self.evicted_total = 0
        self.archived_count = 0
        self.archive = ArchiveState()
        self.secrets: dict[str, list[str]] = {}
        """Items whose text seems to hold a secret: id -> what was said (this process)."""
        self._status: Status | None = None
        self.load()

    # ------------------------------------------------------------------ state

    def load(self) -> None:
        """Read the window back from the store (the truth of every change that succeeded)."""
        self._status = None
        self.chosen = self.store.window_settings(self.root_uri)
        self.settings = window_settings(self.chosen)
        self.tokenizer = self.tokenizers(self.settings.encoding)
        row = self.store.workspace(self.root_uri)
        budget = adaptive.budget_of(self.settings, row.budget)
        self.window.use(
            adaptive.limits_of(self.settings, budget), self.tokenizer.count, self.tokenizer.encoding
        )
        self.window.load(self.store.load_window(self.root_uri), row.next_id, row.next_seq)
        settled = adaptive.budget_of(self.settings, budget, self.window.pinned_tokens)
        if settled != budget:  # never below the pinned items'
            self.window.use(
                adaptive.limits_of(self.settings, settled),
                self.tokenizer.count,
                self.tokenizer.encoding,
            )
        self.window.last_evicted.clear()
        self.window.last_evicted.extend(
            self.store.last_evicted(self.root_uri, self.window.last_evicted.maxlen or 5)
        )
        self.revision = row.revision
        self.evicted_total = row.evicted_total
        self.archived_count = self.store.archived_count(self.root_uri)
        self.archive = self.store.archive_state(self.root_uri)

    def catch_up(self) -> bool:
        """Reload if another process changed this workspace; True if it did."""
        if self.store.workspace(self.root_uri).revision == self.revision:
            return False
        self.load()
        return True

    def status(self) -> Status:
        # Built once per change: a change announces it and returns it too.
        if self._status is None:
            self._status = wire.status(
                self.root_uri,
                self.window,
                self.settings,
                self.revision,
                self.archived_count,
                self.evicted_total,
                self.archive,
                [
                    w
                    for item_id, said in self.secrets.items()
                    if item_id in self.window
                    for w in said
                ],
            )
        return self._status

    def note_secrets(self, item_id: str, where: str, content: str) -> list[str]:
        """Scan an item's new text (``where`` names it, never its text); returns the
        warnings not said before for this item (the status keeps saying all of them while
        the item is in the window)."""
        said = secret_warnings(content, where)
        before = self.secrets.get(item_id, [])
        if said:
            self.secrets[item_id] = said
        else:
            self.secrets.pop(item_id, None)
        if said != before:
            self._status = None
        return [warning for warning in said if warning not in before]

    def change(self, apply: Callable[[Change], T]) -> T:
        # The one-time work first: servers of their own share the database, and the
        # write lock is held from here to the commit (loading o200k takes ~0.2 s).
        self.tokenizer.load()
        try:
            self.burst.begin(self.store)
        except StorageError as error:
            raise ContextError(str(error), ErrorCode.STORAGE) from error
        change = Change()
        try:
            result = apply(change)
            if change.mutated and change.settings is None:
                # After every change the adaptive budget takes a step toward the work.
                change.record_evictions(adaptive.step(self.window, self.settings))
        except BaseException as error:
            if change.mutated or not isinstance(error, ContextError):
                self.load()  # drop what this change half did
            raise
        if change.mutated:
            self._save(change)
        return result

    def _save(self, change: Change) -> None:
        revision = self.revision + 1
        evicted_total = self.evicted_total + len(change.evictions)
        window, store, root = self.window, self.store, self.root_uri
        try:
            with store.savepoint():
                present = [window.get(i) for i in change.touched if i in window]
                gone = [i for i in change.touched if i not in window]
                if present:
                    store.save_items(root, present)
                if gone:
                    store.delete_items(root, gone)
                gained = -store.delete_archived(root, change.restored)
                at = self.clock()
                by_reason: dict[str, list[Item]] = {}
                for item_id, (item, reason) in change.archived.items():
                    if item_id not in window:
                        by_reason.setdefault(reason, []).append(item)
                for reason, items in by_reason.items():
                    for item in items:  # the archive keeps one copy of a text from a source
                        copies = [i for i in store.archived_duplicates(root, item) if i != item.id]
                        gained -= store.delete_archived(root, copies)
                        change.aliases.update(dict.fromkeys(copies, item.id))
                    gained += store.archive(root, items, reason, at)
                if change.aliases:
                    store.save_aliases(root, change.aliases)
                if change.settings is not None:
                    store.save_window_settings(root, change.settings)
                gained += change.archive_delta
                settings = change.new_settings or self.settings
                store.save_workspace(root, self._row(revision, evicted_total, settings))
        except Exception as error:
            self.load()
            if "full" in str(error):
                raise ContextError(
                    f"the disk holding {self.store.location} is full; nothing changed. Even "
                    "removing or forgetting needs a little room to record the deletion: free "
                    "some space on that disk, then try again",
                    ErrorCode.STORAGE,
                ) from error
            raise ContextError(
                f"the change could not be saved ({error}); nothing changed", ErrorCode.STORAGE
            ) from error
        self.revision, self.evicted_total = revision, evicted_total
        self.archived_count += gained
        if gained or change.archived or change.restored or change.archive_delta:
            self.archive = store.archive_state(root)
        self._status = None
        self.burst.changed(self, change.evictions)

    def _row(self, revision: int, evicted_total: int, settings: WindowSettings) -> WorkspaceRow:
        window = self.window
        # The adaptive budget the window reached is kept; a fixed one is the setting.
        budget = window.limits.max_tokens if settings.budget_policy == "adaptive" else 0
        return WorkspaceRow(window.next_id, window.next_seq, revision, evicted_total, budget)

    def in_memory(self) -> WindowInMemory:
        """The window as it is now, for a fresh database when the file was destroyed."""
        return WindowInMemory(
            self.root_uri,
            list(self.window),
            self.chosen,
            self._row(self.revision, self.evicted_total, self.settings),
        )

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
        return self._add(
            self.region_candidate(
                uri, start, end, text, language, metadata, pin, symbol, symbol_kind
            )
        )

    def region_candidate(
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
    ) -> Candidate:
        """What adding a region means: the region, or its whole file when that is already
        context (refreshed rather than cut). Refused before anything changes."""
        path, rel = self.sources.locate(uri)
        check_range(start, end)
        max_bytes = self.settings.max_file_bytes
        if text is None:
            # Cut first, so a range the file does not have is refused whatever
            # the window holds.
            source: str | None = self.sources.text(uri, path, rel, max_bytes)
            assert source is not None
            piece = slice_range(source, start, end, rel)
            content, lines = piece.content, (piece.start_line, piece.end_line)
        else:
            if not text.strip():
                raise InvalidParams("$.text", "the text is empty")
            check_size(len(text.encode()), rel, max_bytes)
            content, lines = text, display_lines(start, end)
            found = self.sources.current(rel, uri, max_bytes)
            source = found if isinstance(found, str) else None
        if any(item.is_whole_file for item in self.window.items_for_path(rel)):
            # The whole file is already context: refresh it rather than add a piece of it.
            return self.file_candidate(uri, language, metadata, pin)
        return candidates.region(
            content, uri, rel, lines, language, metadata, pin, symbol, symbol_kind, source
        )

    def add_file(
        self,
        uri: str,
        language: str | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
    ) -> AddResult:
        return self._add(self.file_candidate(uri, language, metadata, pin))

    def file_candidate(
        self,
        uri: str,
        language: str | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
    ) -> Candidate:
        path, rel = self.sources.locate(uri)
        content = self.sources.text(uri, path, rel, self.settings.max_file_bytes)
        return candidates.file(content, uri, rel, language, metadata, pin)

    def add_text(
        self,
        kind: ItemKind,
        content: str,
        language: str | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
    ) -> AddResult:
        return self._add(candidates.text(kind, content, language, metadata, pin))

    def _add(self, candidate: Candidate) -> AddResult:
        def apply(change: Change) -> AddOutcome:
            outcome = self.window.add(candidate)
            change.record(outcome)
            return outcome

        outcome = self.change(apply)
        warnings = self.note_secrets(outcome.item.id, _where(outcome.item), candidate.content)
        return AddResult(
            item=wire.context_item(outcome.item),
            evicted=[wire.context_item(e.item) for e in outcome.evicted],
            deduplicated=outcome.deduplicated,
            status=self.status(),
            merged=[item.id for item in outcome.absorbed],
            warnings=warnings,
        )

    # --------------------------------------------------------------- changing

    def remove(self, ids: list[str]) -> RemoveResult:
        resolved, merged = self.resolve(ids)
        removed = self._to_archive(lambda: self.window.remove(resolved), "removed")
        return RemoveResult(
            removed=[item.id for item in removed], status=self.status(), merged=merged
        )

    def resolve(self, ids: list[str]) -> tuple[list[str], dict[str, str]]:
        """Ids as they are now: one merged into another item names that item.

        Returns the ids (in order, without repeats) and the merged ones (asked -> now).
        """
        now: dict[str, str] = {}
        pending = [i for i in dict.fromkeys(ids) if i not in self.window]
        current = {i: i for i in pending}
        for _ in range(64):  # merge chains are short; a cycle cannot loop forever
            targets = self.store.alias_targets(self.root_uri, list(set(current.values())))
            moved = False
            for asked, at in current.items():
                if at in targets and targets[at] != at and at not in self.window:
                    current[asked] = targets[at]
                    moved = True
            if not moved:
                break
        for asked, at in current.items():
            if at != asked:
                now[asked] = at
        resolved = list(dict.fromkeys(now.get(i, i) for i in ids))
        return resolved, now

    def clear(self, keep_pinned: bool) -> ClearResult:
        cleared = self._to_archive(lambda: self.window.clear(keep_pinned), "cleared")
        return ClearResult(
            cleared=len(cleared), cleared_ids=[item.id for item in cleared], status=self.status()
        )

    def _to_archive(self, take: Callable[[], list[Item]], reason: str) -> list[Item]:
        """Take items out of the window (``take``) and archive them for ``reason``."""

        def apply(change: Change) -> list[Item]:
            taken = take()
            for item in taken:
                change.to_archive(item, reason)
            return taken

        return self.change(apply)

    def pin(self, item_id: str, pinned: bool) -> PinResult:
        (item_id,), merged = self.resolve([item_id])

        def apply(change: Change) -> Item:
            item = self.window.set_pinned(item_id, pinned)
            change.touch(item)
            return item

        item = self.change(apply)
        return PinResult(item=wire.context_item(item), status=self.status(), merged=merged)

    def restore(self, ids: list[str], pin: bool, dry_run: bool = False) -> RestoreResult:
        """Bring archived items back (their own ids), evicting to make room like an add.

        ``dry_run``: the same change, answered and rolled back (what would come back,
        what would go), so an editor can ask before evicting.
        """
        resolved, merged = self.resolve(ids)
        already = [item_id for item_id in resolved if item_id in self.window]
        wanted = [item_id for item_id in resolved if item_id not in self.window]
        if not wanted:  # nothing to bring back: say so, change nothing
            return RestoreResult(
                items=[], evicted=[], status=self.status(), already_in_window=already, merged=merged
            )

        def apply(change: Change) -> RestoreResult:
            found = self.store.archived(self.root_uri, wanted)
            missing = [item_id for item_id in wanted if item_id not in found]
            if missing:
                raise NotArchived(_not_archived_message(missing, self.window))
            restored: list[Item] = []
            for item_id in wanted:
                old = found[item_id]
                try:
                    outcome = self.window.add(
                        Candidate(old.kind, old.content, old.metadata, pin or old.pinned, id=old.id)
                    )
                except (ItemTooLarge, NoRoom) as error:
                    raise type(error)(_no_room_to_restore(old, self.window, wanted)) from None
                change.restore(item_id)
                change.record(outcome)
                restored.append(outcome.item)
            evicted = [eviction.item for eviction in change.evictions]
            in_window = {item.id for item in self.window}
            return RestoreResult(
                items=[wire.context_item(item) for item in restored if item.id in in_window],
                evicted=[wire.context_item(item) for item in evicted if item.id not in in_window],
                status=wire.EMPTY_STATUS,
                already_in_window=already,
                merged=merged,
                dry_run=dry_run,
            )

        result = self.rehearse(apply) if dry_run else self.change(apply)
        return msgspec.structs.replace(result, status=self.status())

    def rehearse(self, apply: Callable[[Change], T]) -> T:
        """Run a change and answer with what it did, then roll it back: a dry run that
        agrees with the real change because it is the real change."""

        class Rehearsed(Exception):
            def __init__(self, value: T) -> None:
                super().__init__("rehearsed")
                self.value = value

        def rehearsal(change: Change) -> T:
            raise Rehearsed(apply(change))

        try:
            self.change(rehearsal)
        except Rehearsed as done:  # ``change`` reloaded the window: nothing happened
            return done.value
        raise AssertionError("a rehearsal always ends in its exception")

    # --------------------------------------------------------------- settings

    def configure(self, wanted: dict[str, Any], reset: Sequence[str] = ()) -> ConfigureResult:
        """Change this window's settings (camelCase keys), evicting at once.

        Refused with nothing changed (NO_ROOM) if the pinned items alone would
        break the new limits. The settings are saved with the window, so every
        client and process sees the same ones.
        """
        chosen = {key: value for key, value in self.chosen.items() if key not in reset}
        chosen.update(wanted)
        new = window_settings(chosen)
        chosen = chosen_of(new, [key for key in WINDOW_KEYS if key in chosen])
        before = self.settings
        changed = [key for key in WINDOW_KEYS if chosen_of(new, [key]) != chosen_of(before, [key])]
        evicted: list[Item] = []
        if chosen != self.chosen:
            tokenizer = self.tokenizers(new.encoding)
            window = self.window
            budget = adaptive.configured(
                before, new, window.limits.max_tokens, window.pinned_tokens
            )
            moved = budget != window.limits.max_tokens
            limits = adaptive.limits_of(new, budget)

            def apply(change: Change) -> None:
                change.mutated = True
                change.settings = chosen
                change.new_settings = new
                if limits != window.limits:
                    change.record_evictions(window.reconfigure(limits))
                if tokenizer.encoding != window.encoding:
                    change.record_evictions(window.retokenize(tokenizer.count, tokenizer.encoding))
                    for item in window:
                        change.touch(item)
                if not moved:  # settings that moved the budget are this change's step
                    change.record_evictions(adaptive.step(window, new))
                evicted.extend(eviction.item for eviction in change.evictions)

            self.change(apply)  # a refusal leaves the window and its settings as they were
            self.chosen, self.settings, self.tokenizer = chosen, new, tokenizer
            self._status = None
        return ConfigureResult(
            settings=self.settings,
            chosen=list(self.chosen),  # type: ignore[arg-type]
            changed=changed,  # type: ignore[arg-type]
            evicted=[wire.context_item(item) for item in evicted],
            status=self.status(),
        )

    def seed(self, wish: dict[str, Any]) -> None:
        """A client's settings for a window that has none of its own yet."""
        if wish and not self.chosen:
            self.configure(wish)

    # ------------------------------------------------------------- following

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
                                self.window.set_stale(item.id, True, "too large")
                            continue
                    if plan.lines is not None:
                        self.window.move(item.id, plan.lines)
                    if item.stale != plan.stale or plan.why is not None:
                        self.window.set_stale(item.id, plan.stale, plan.why)

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
                    self.window.set_stale(item_id, False)
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

    # -------------------------------------------------------------- lifecycle

    @property
    def retention(self) -> Retention:
        settings = self.settings
        return Retention(
            settings.archive_max_items, settings.archive_max_bytes, settings.archive_max_age_days
        )

    def archive_over(self, now: int) -> bool:
        """The archive holds more than its retention settings allow (cheap to ask)."""
        keep = self.retention
        if keep.max_items and self.archived_count > keep.max_items:
            return True
        if keep.max_bytes and self.archive.bytes > keep.max_bytes:
            return True
        if keep.max_age_days:
            oldest = self.store.oldest_archived_at(self.root_uri)
            return oldest is not None and oldest < now - keep.max_age_ms
        return False

    def prune(self, now: int, batch: int) -> int:
        """Delete the oldest archived items beyond the retention settings (at most ``batch``).

        A change like any other: the revision moves, the status says what went.
        """

        def apply(change: Change) -> int:
            count, _, _ = self.store.prune(self.root_uri, self.retention, now, batch)
            if count:
                change.mutated = True
                change.archive_delta -= count
            return count

        return self.change(apply)

    def forget(self, ids: list[str] | None, query: str | None, dry_run: bool) -> ForgetResult:
        """Remove items for good: from the window and the archive, their text scrubbed."""
        if not ids and not (query and query.strip()):
            raise InvalidParams("$.ids", "say which items to forget: ids, or a query")
        in_window, in_archive = self._to_forget(ids or [], query)
        gone = [*in_window, *self.store.archived_summaries(self.root_uri, in_archive)]
        forgotten = [wire.summary(item) for item in gone]
        if dry_run or not gone:
            return ForgetResult(forgotten=forgotten, status=self.status(), dry_run=dry_run)
        window_ids = [item.id for item in in_window]

        def apply(change: Change) -> None:
            change.archive_delta -= self.store.forget(self.root_uri, in_archive)
            for item in self.window.remove(window_ids):
                change.touch(item)  # its row is deleted, not archived
            change.mutated = True

        self.change(apply)
        self.window.last_evicted.clear()
        self.window.last_evicted.extend(
            self.store.last_evicted(self.root_uri, self.window.last_evicted.maxlen or 5)
        )
        self._status = None
        return ForgetResult(forgotten=forgotten, status=self.status())

    def _to_forget(self, ids: list[str], query: str | None) -> tuple[list[Item], list[str]]:
        in_window: list[Item] = []
        in_archive: list[str] = []
        if ids:
            wanted = self.resolve(ids)[0]
            archived = self.store.archived(
                self.root_uri, [i for i in wanted if i not in self.window]
            )
            unknown = [i for i in wanted if i not in self.window and i not in archived]
            if unknown:
                raise ContextError(
                    f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} neither in the "
                    "window nor in the archive; nothing was forgotten",
                    ErrorCode.UNKNOWN_ITEM,
                )
            in_window = [self.window.get(i) for i in wanted if i in self.window]
            in_archive = [i for i in wanted if i in archived]
        if query and query.strip():
            words = [word.casefold() for word in query.split()]
            for item in self.window:
                text = f"{item.label}\n{item.content}".casefold()
                if all(word in text for word in words) and item not in in_window:
                    in_window.append(item)
            for item_id in self.store.archived_ids(self.root_uri, query):
                if item_id not in in_archive:
                    in_archive.append(item_id)
        return in_window, in_archive

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
        auto_retrieve: bool = False,
    ) -> RenderResult:
        items = select(list(self.window), kinds, limit)
        history: list[Item] = []
        scores: dict[str, float] = {}
        missed: list[str] = []
        if query and query.strip():  # archived items that answer it: "Relevant history"
            history, scores, missed = self._storage(
                searching.history,
                self.store,
                self.root_uri,
                self.archived_count,
                query,
                kinds,
                auto_retrieve,
            )
        budget = self.window.limits.max_tokens
        rendered = render(items, fmt, self.tokenizer.count, max_tokens, history, budget)
        return RenderResult(
            text=rendered.text,
            tokens=rendered.tokens,
            item_ids=rendered.item_ids,
            omitted_ids=rendered.omitted_ids,
            format=fmt,
            history_ids=rendered.history_ids,
            history_scores=[scores.get(item_id, 0.0) for item_id in rendered.history_ids],
            warnings=[
                *rendered.warnings,
                *missed,
                *(w for item_id in rendered.item_ids for w in self.secrets.get(item_id, [])),
            ],
            history_omitted=[
                Omission(id=item_id, reason=why) for item_id, why in rendered.history_omitted
            ],
            budget=max_tokens or budget,
        )

    def search(
        self, query: str, limit: int, kinds: Sequence[str] | None, mode: str | None = None
    ) -> SearchResult:
        return self._storage(
            searching.search,
            self.store,
            self.root_uri,
            self.archived_count,
            query,
            limit,
            kinds,
            mode,
        )

    def semantic_status(self) -> SemanticStatus:
        """Search by meaning here (only ``status`` answers carry it; pushes stay cheap)."""
        return searching.semantic_status(self.store, self.root_uri, self.archived_count)

    def _storage(self, read: Callable[..., T], *args: Any) -> T:
        try:
            return read(*args)
        except StorageError as error:
            raise ContextError(str(error), ErrorCode.STORAGE) from error


def _where(item: Item) -> str:
    """An item named by its source, never by its text (which may be the secret itself)."""
    return item.path or f"{item.id} ({item.kind})"


def _no_room_to_restore(item: Item, window: Window, wanted: list[str]) -> str:
    """Why ``item`` cannot come back, and what would let it; nothing was restored."""
    limits = window.limits
    others = [item_id for item_id in wanted if item_id != item.id]
    nothing = f"nothing was restored ({', '.join(others)} neither)" if others else "nothing changed"
    if item.tokens > limits.max_tokens:
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
