"""The unit of work: the one owner of the write transaction and of when it commits.

The first change of a burst of requests takes the store's write lock (and so
catches up with what other processes committed); the changes that follow join
the same transaction. The server commits it at the end of the event loop's turn
that answered them (``ContextServer.end_of_turn`` calls ``ContextService.commit``),
right before the answers leave: a pipelined burst is committed once, and an answer
given while changes are ``uncommitted`` is written only after they are committed.
If the commit fails, those answers become the storage error instead (see
``lsp.outbox.Outbox.flush``), the windows are reloaded from the database, and the
editors get the new status.

After a commit, each changed window is announced once: one eviction notice
per reason (an item evicted and restored within the burst is not reported)
and one status.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from contextls.app import protocol_views as wire
from contextls.core.items import Item
from contextls.core.window import Eviction, Window
from contextls.protocol import ContextItem, EvictionReason, Status
from contextls.storage.errors import StorageError, describe

if TYPE_CHECKING:
    from contextls.storage.store import Store


class ChangedWindow(Protocol):
    """A workspace as the unit of work sees it: whose window changed, and its status."""

    root_uri: str
    window: Window

    def status(self) -> Status: ...


class Listener(Protocol):
    """Who hears of committed changes (the LSP server: notifications to the editor)."""

    def status_changed(self, status: Status) -> None: ...

    def evicted(self, workspace: str, items: list[ContextItem], reason: EvictionReason) -> None: ...


class UnitOfWork:
    def __init__(
        self,
        listener: Listener,
        catch_up: Callable[[], None],
        recover: Callable[[Exception], str],
    ) -> None:
        """``catch_up`` reloads what other processes changed; ``recover`` handles a failed
        commit (after the rollback) and returns what to tell the requests that lost their change.
        """
        self.listener = listener
        self._catch_up = catch_up
        self._recover = recover
        self._store: Store | None = None
        self._changed: dict[str, ChangedWindow] = {}
        self._evicted: dict[str, dict[str, tuple[Item, EvictionReason]]] = {}

    @property
    def uncommitted(self) -> bool:
        """Changes were written into the open transaction and wait for ``commit``."""
        return bool(self._changed)

    @property
    def open(self) -> bool:
        return self._store is not None and self._store.in_transaction

    def begin(self, store: Store) -> None:
        """Join the open burst, or open one: take the write lock and catch up.

        A burst whose transaction SQLite rolled back by itself (a full disk) is not
        joined, nor followed by a new transaction that would commit and so acknowledge
        the changes it lost: the change is refused, and the commit fails the burst."""
        if self._changed and not store.in_transaction:
            raise StorageError(f"an earlier change of this burst was not saved: {self._lost()}")
        if store.begin():
            self._store = store
            self._catch_up()

    def changed(self, workspace: ChangedWindow, evictions: list[Eviction]) -> None:
        """A change of ``workspace`` was written into the open transaction."""
        self._changed[workspace.root_uri] = workspace
        evicted = self._evicted.setdefault(workspace.root_uri, {})
        for eviction in evictions:
            evicted[eviction.item.id] = (eviction.item, eviction.reason)

    def commit(self) -> str | None:
        """Commit the open burst and announce it; on failure, why (and the windows reloaded)."""
        store = self._store
        if store is None:
            return None
        if not store.in_transaction:
            if not self._changed:
                return None
            error = StorageError(self._lost())  # SQLite rolled the burst back by itself
            self._forget()
            return self._recover(error)
        try:
            store.commit()
        except Exception as error:
            self._forget()
            with contextlib.suppress(Exception):  # a connection that is gone: recover reopens
                store.rollback()
            return self._recover(error)
        self._announce()
        return None

    def _lost(self) -> str:
        """Why the open burst's transaction went, as SQLite said it."""
        lost = self._store.take_lost() if self._store is not None else None
        if lost is None:
            return "SQLite rolled the transaction back"
        return describe(lost)

    def abandon(self) -> None:
        """Forget what was not committed (the store rolled back or went away)."""
        self._forget()
        store, self._store = self._store, None
        if store is not None and store.in_transaction:
            store.rollback()

    def _forget(self) -> None:
        self._changed.clear()
        self._evicted.clear()

    def _announce(self) -> None:
        changed, self._changed = self._changed, {}
        evicted, self._evicted = self._evicted, {}
        for root, workspace in changed.items():
            by_reason: dict[EvictionReason, list[ContextItem]] = {}
            for item, reason in evicted.get(root, {}).values():
                if item.id not in workspace.window:
                    by_reason.setdefault(reason, []).append(wire.context_item(item))
            for reason, items in by_reason.items():
                self.listener.evicted(root, items, reason)
            self.listener.status_changed(workspace.status())
