"""One workspace folder's state: its window, its rows in the store, its tokenizer.

Every change follows one path (``change``): join the unit of work (which
holds the store's write lock), change the window in memory (the window
refuses before it changes anything), then write what the ``Change`` recorded
into the open transaction under a savepoint. If the change fails half-way,
the window is read back from the store, which holds exactly the changes that
succeeded before it. The unit of work commits before the answers leave.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from contextls.app import protocol_views as wire
from contextls.app.changes import Change
from contextls.app.settings import window_settings
from contextls.app.sources import Documents, FileWatch, Sources
from contextls.app.unit_of_work import UnitOfWork
from contextls.core import adaptive
from contextls.core.errors import ContextError
from contextls.core.items import Item
from contextls.core.secrets import secrets_in, warning_of, words_of
from contextls.core.tokens import Tokenizer
from contextls.core.window import Limits, Window
from contextls.protocol import (
    CacheEstimate,
    ContextItem,
    DidWarnParams,
    ErrorCode,
    SecretFound,
    Status,
    WindowSettings,
)
from contextls.storage.rescue import WindowInMemory
from contextls.storage.store import ArchiveState, StorageError, Store, WorkspaceRow
from contextls.storage.transaction import is_disk_full

T = TypeVar("T")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class WorkspaceState:
    """A workspace's state and the one path of every change (``change``)."""

    def __init__(
        self,
        root_uri: str,
        root_path: Path,
        store: Store,
        unit_of_work: UnitOfWork,
        tokenizers: Callable[[str], Tokenizer],
        documents: Documents,
        clock: Callable[[], int] = now_ms,
        warn: Callable[[str | DidWarnParams], None] = lambda message: None,
    ) -> None:
        self.root_uri = root_uri
        self.warn = warn
        """Tell every client's person (window/showMessage): what the follow found."""
        self.store = store
        self.unit_of_work = unit_of_work
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
        self.secrets: dict[str, list[SecretFound]] = {}
        """Items whose text seems to hold a secret: id -> what was found (this process)."""
        self._status: Status | None = None
        self._last_render: list[tuple[str, int, int]] = []
        """(id, seq, tokens) of the items of the last whole markdown render, in order."""
        self._render_kept = 1.0
        self.after_change: list[Callable[[Change], None]] = []
        """Called after every change that changed something (the follower: a region
        added or moved is where its file's lines are now)."""
        self.before_save: list[Callable[[Change], None]] = []
        """Called before a change is written (the views: what compaction outlined is
        saved with it; an item archived from its outline is archived whole)."""
        self.after_save: list[Callable[[Change], None]] = []
        """Called once a change is written (the views tell what they outlined)."""
        self.load()

    # ------------------------------------------------------------------ state

    def load(self) -> None:
        """Read the window back from the store (the truth of every change that succeeded)."""
        self._status = None
        self.chosen = self.store.windows.window_settings(self.root_uri)
        self.settings = window_settings(self.chosen)
        self.tokenizer = self.tokenizers(self.settings.encoding)
        row = self.store.windows.workspace(self.root_uri)
        budget = adaptive.budget_of(self.settings, row.budget)
        self.window.use(
            adaptive.limits_of(self.settings, budget), self.tokenizer.count, self.tokenizer.encoding
        )
        self.window.load(self.store.windows.load_window(self.root_uri), row.next_id, row.next_seq)
        settled = adaptive.budget_of(self.settings, budget, self.window.pinned_tokens)
        if settled != budget:  # never below the pinned items'
            self.window.use(
                adaptive.limits_of(self.settings, settled),
                self.tokenizer.count,
                self.tokenizer.encoding,
            )
        self.window.last_evicted.clear()
        self.window.last_evicted.extend(
            self.store.archive.last_evicted(self.root_uri, self.window.last_evicted.maxlen or 5)
        )
        self.revision = row.revision
        self.evicted_total = row.evicted_total
        self.archived_count = self.store.archive.archived_count(self.root_uri)
        self.archive = self.store.retention.archive_state(self.root_uri)

    def catch_up(self) -> bool:
        """Reload if another process changed this workspace; True if it did."""
        if self.store.windows.workspace(self.root_uri).revision == self.revision:
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
                    words_of(found)
                    for item_id, said in self.secrets.items()
                    if item_id in self.window
                    for found in said
                ],
                self._cache_estimate(),
            )
        return self._status

    def rendered(self, items: list[Item]) -> None:
        """The window was rendered whole (markdown) with these items, in this order: what
        a prompt cache kept of the render before, and the base of the next estimate."""
        now = [(item.id, item.seq, item.tokens) for item in items]
        before = self._last_render
        if before:
            same = _common(before, now)
            total = sum(tokens for _, _, tokens in before) or 1
            self._render_kept = sum(tokens for _, _, tokens in before[:same]) / total
        self._last_render = now
        self._status = None

    def _cache_estimate(self) -> CacheEstimate | None:
        """The items before the first one that changed since the last render stay a
        cached prefix (an item's rendered text changes only with its ``seq`` under the
        stable order); what follows is the next request's uncached input."""
        if not self._last_render:
            return None
        now = [(item.id, item.seq, item.tokens) for item in self.window]
        same = _common(self._last_render, now)
        uncached = sum(tokens for _, _, tokens in now[same:])
        return CacheEstimate(kept=round(self._render_kept, 3), next_uncached=uncached)

    def status_moved(self) -> None:
        """What the status says changed without a change of the window (its settings, its
        archive): it is made again when next asked."""
        self._status = None

    def note_secrets(
        self, item_id: str, where: str, content: str, scanned: list[str] | None = None
    ) -> list[SecretFound]:
        """Scan an item's new text (``where`` names it, never its text; ``scanned``: what a
        scan of it found already); returns the secrets not said before for this item (the
        status keeps saying all of them while the item is in the window)."""
        kinds = secrets_in(content) if scanned is None else scanned
        said = [SecretFound(item=item_id, where=where, found=found) for found in kinds]
        before = self.secrets.get(item_id, [])
        if said:
            self.secrets[item_id] = said
        else:
            self.secrets.pop(item_id, None)
        if said != before:
            self._status = None
        return [found for found in said if found not in before]

    def secret_warnings(self, item_id: str) -> list[str]:
        """What the status says of the secrets ``item_id`` seems to hold."""
        return [words_of(found) for found in self.secrets.get(item_id, [])]

    def warn_secret(self, found: SecretFound) -> None:
        """Tell every client that an item's text, taken in live, seems to hold a secret."""
        self.warn(warning_of(found, self.root_uri))

    def change(self, apply: Callable[[Change], T]) -> T:
        return self.recorded_change(apply)[0]

    def evicted_by(self, change: Change) -> list[ContextItem]:
        """Every item a change took out of the window for good (an adaptive step's too),
        as an answer reports them."""
        return [
            wire.context_item(eviction.item)
            for eviction in change.evictions
            if eviction.item.id not in self.window
        ]

    def recorded_change(self, apply: Callable[[Change], T]) -> tuple[T, Change]:
        """``change``, and the record of what it did (for an answer that says all of it)."""
        # The one-time work first: servers of their own share the database, and the
        # write lock is held from here to the commit (loading o200k takes ~0.2 s).
        self.tokenizer.load()
        try:
            self.unit_of_work.begin(self.store)
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
            for hook in self.after_change:
                hook(change)
        return result, change

    def _save(self, change: Change) -> None:
        for hook in self.before_save:
            hook(change)
        revision = self.revision + 1
        evicted_total = self.evicted_total + len(change.evictions)
        window, store, root = self.window, self.store, self.root_uri
        try:
            with store.savepoint():
                present = [window.get(i) for i in change.touched if i in window]
                gone = [i for i in change.touched if i not in window]
                if present:
                    store.windows.save_items(root, present)
                if gone:
                    store.windows.delete_items(root, gone)
                gained = -store.archive.delete_archived(root, change.restored)
                at = self.clock()
                by_reason: dict[str, list[Item]] = {}
                for item_id, (item, reason) in change.archived.items():
                    if item_id not in window:
                        by_reason.setdefault(reason, []).append(item)
                for reason, items in by_reason.items():
                    found = store.archive.archived_copies(root, items)
                    for item, (_, copies) in zip(items, found, strict=True):
                        # The archive keeps one copy of a text from a source.
                        copies = [i for i in copies if i != item.id]
                        gained -= store.archive.delete_archived(root, copies)
                        change.aliases.update(dict.fromkeys(copies, item.id))
                    digests = [digest for digest, _ in found]
                    gained += store.archive.add(root, items, reason, at, digests)
                if change.aliases:
                    store.archive.save_aliases(root, change.aliases)
                if change.settings is not None:
                    store.windows.save_window_settings(root, change.settings)
                gained += change.archive_delta
                settings = change.new_settings or self.settings
                store.windows.save_workspace(root, self._row(revision, evicted_total, settings))
        except Exception as error:
            self.load()
            if is_disk_full(error):
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
            self.archive = store.retention.archive_state(root)
        self._status = None
        self.unit_of_work.changed(self, change.evictions)
        for hook in self.after_save:
            hook(change)

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

    # ------------------------------------------------------------- resolving

    def resolve(self, ids: list[str]) -> tuple[list[str], dict[str, str]]:
        """Ids as they are now: one merged into another item names that item.

        Returns the ids (in order, without repeats) and the merged ones (asked -> now).
        """
        now: dict[str, str] = {}
        pending = [i for i in dict.fromkeys(ids) if i not in self.window]
        current = {i: i for i in pending}
        for _ in range(64):  # merge chains are short; a cycle cannot loop forever
            targets = self.store.archive.alias_targets(self.root_uri, list(set(current.values())))
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

    def storage(self, read: Callable[..., T], *args: Any) -> T:
        """``read(*args)``, a storage failure said as the window's refusal."""
        try:
            return read(*args)
        except StorageError as error:
            raise ContextError(str(error), ErrorCode.STORAGE) from error


def _where(item: Item) -> str:
    """An item named by its source, never by its text (which may be the secret itself)."""
    return item.path or f"{item.id} ({item.kind})"


def _common(before: list[tuple[str, int, int]], now: list[tuple[str, int, int]]) -> int:
    """How many items the two renders share from their start (same id, same text)."""
    same = 0
    for old, new in zip(before, now, strict=False):
        if old[:2] != new[:2]:
            break
        same += 1
    return same
