"""The context service of one process: the store, one Workspace per folder, the watch.

Every client session (``session.Session``: one per LSP connection, many in
the daemon) shares it, so every client sees the same windows. A session
finds the workspace a request is for, and ``workspace`` hands it over; that
is a lookup (it reads, and catches up with what other processes committed)
and takes no lock. A change takes the write lock through the unit of work
(``unit_of_work``); ``commit`` commits it, at the end of the turn that answered the
change and before the answers leave (``lsp.server.ContextServer.end_of_turn``).

When the database goes wrong under a running server the service keeps what
was acknowledged: a failed commit reloads the windows from the database (the
answers that reported the lost changes become the storage error), and a
database file that was overwritten is moved aside and the windows in memory
are written into a fresh one.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from contextls.app import counting_process, searching
from contextls.app.idle import IdleIndexing, Later
from contextls.app.map_process import MapProcess
from contextls.app.repo_map import PREPARE_AFTER, worth_preparing
from contextls.app.scrubbing import Scrubbing
from contextls.app.sources import Documents
from contextls.app.tokenizers import tokenizer as offline_tokenizer
from contextls.app.unit_of_work import Listener, UnitOfWork
from contextls.app.workers import Workers
from contextls.app.workspace import Workspace, now_ms
from contextls.core.errors import ContextError
from contextls.core.tokens import Tokenizer
from contextls.protocol import (
    STORAGE_ENV,
    CountTokensResult,
    DidWarnParams,
    Durability,
    Encoding,
    ErrorCode,
    SemanticStatus,
)
from contextls.search.meaning import meaning_for
from contextls.storage.rescue import rescue_into_fresh_database
from contextls.storage.store import StorageError, Store

log = logging.getLogger(__name__)

PRUNE_BATCH = 50
"""Archived items pruned per idle turn, one turn per ``IDLE`` at most. Measured here
(``bench_lifecycle.py``): ~27 µs an item, so ~1.5 ms a batch: a request that arrives
during one waits that long at worst. Batches of 500 took 13-26 ms, and adds 60 ms
apart came back 1.14x slower at the median; 50 a turn prunes ~1,000 items a second
of idle time."""

WATCH_INTERVAL = 0.5
"""Seconds between looks at what changed elsewhere: other processes' commits (one
``PRAGMA data_version``) and the files items point into (one ``stat`` per file).
Changes reach every client's status within a second, even a client that sends nothing."""


class NoWorkspace(ContextError):
    code = ErrorCode.NO_WORKSPACE


class ContextService:
    def __init__(
        self,
        listener: Listener,
        documents: Documents,
        warn: Callable[[str | DidWarnParams], None],
        later: Later,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.listener = listener
        self.documents = documents
        self.warn = warn
        """Tell the person (window/showMessage); used for settings and storage trouble."""
        self.clock = clock
        self._later = later
        self.storage: str | None = None
        """The database: a path, ``:memory:``, or None for $CONTEXTLS_STORAGE or the default."""
        self.durability: Durability = "normal"
        self.fixed_storage = False
        """The daemon serves one database whatever its clients ask (see ``use_storage``)."""
        self.unit_of_work = UnitOfWork(listener, self._catch_up, self._recover)
        self.scrubbing = Scrubbing(lambda: self._store, warn)
        """Forgotten text out of the files, after the commit that forgot it."""
        self.idle = IdleIndexing(later, self.index_some)
        self._store: Store | None = None
        self._workspaces: dict[str, Workspace] = {}
        self._tokenizers: dict[str, Tokenizer] = {}
        self._watching = False
        self.workers = Workers()
        """Processes for parsing code off the event loop (outlines, a name looked for in
        every file)."""
        self.maps = MapProcess()
        """The maps' own process: it parses and ranks every workspace's map."""
        self._opened: set[str] = set()
        """The workspaces made ready as a folder opened (or about to be)."""

    # --------------------------------------------------------------- settings

    def use_storage(self, storage: str | None, durability: Durability) -> str | None:
        """Use this database from now on; returns why not, when the storage is fixed."""
        if (storage, durability) == (self.storage, self.durability):
            return None
        if self.fixed_storage:
            return (
                f"this daemon serves {self.store.location} (durability {self.durability}); "
                f"storage and durability from a client are ignored"
            )
        self._close_store()
        self.storage, self.durability = storage, durability
        return None

    def tokenizer(self, encoding: Encoding | str | None = None) -> Tokenizer:
        name = encoding or "o200k_base"
        if name not in self._tokenizers:
            self._tokenizers[name] = offline_tokenizer(name)
        return self._tokenizers[name]

    # ---------------------------------------------------------------- storage

    @property
    def store(self) -> Store:
        if self._store is None:
            location = self.storage or os.environ.get(STORAGE_ENV) or None
            try:
                self._store = Store(location, self.durability)
            except (StorageError, OSError) as error:
                raise ContextError(
                    f"the context database cannot be opened: {error}", ErrorCode.STORAGE
                ) from error
            if self._store.moved_aside is not None:
                self.warn(
                    f"the context database {self._store.moved_why}; it was moved to "
                    f"{self._store.moved_aside} and contextls started with an empty one"
                )
            for said in self._store.tightened:
                log.warning("%s", said)
                self.warn(said)
            if self._store.read_only is not None:
                self.warn(f"{self._store.read_only}: the context can be read, not changed")
        return self._store

    def commit(self) -> str | None:
        """Commit the unit of work (``ContextServer.end_of_turn`` does, before answers leave).

        Returns why it failed, for the answers that reported a change, or None.
        """
        if self.unit_of_work.open or self.unit_of_work.uncommitted:
            # Nothing to commit otherwise; a burst SQLite rolled back by itself fails here.
            failure = self.unit_of_work.commit()
            if failure is not None:
                return failure
            self.idle.committed()
        self.scrubbing.after_commit()  # a forget's scrub held for a turn of its own, too
        return None

    def _close_store(self) -> None:
        if self._store is not None:
            self.commit()
            self.scrubbing.scrub()  # held by a forget that will not answer now
            self.unit_of_work.abandon()  # nothing is left open; it lets go of the store
            while self.index_some(prune=False):  # searchable by the next reader, read-only too
                pass
            self._store.close()
        self._store = None
        self._workspaces.clear()

    def close(self) -> None:
        self._close_store()
        self.workers.close()
        self.maps.close()
        counting_process.close()

    def _catch_up(self) -> None:
        """Reload the windows other processes changed, and tell the editors."""
        store = self._store
        if store is None:
            return
        damage = store.damaged()
        if damage is not None:
            self._rescue(damage)
            return
        if not store.changed_elsewhere():
            return
        for workspace in self._workspaces.values():
            if workspace.catch_up():
                workspace.watch.forget()
                self.listener.status_changed(workspace.status())

    def _recover(self, error: Exception) -> str:
        """A commit failed and was rolled back: reload what the database holds."""
        store = self._store
        location = store.location if store is not None else "the context database"
        log.error("committing to %s failed: %s", location, error)
        damage = store.damaged(deep=True) if store is not None else None
        if damage is not None:
            self._rescue(damage)
            return f"{damage}; the change was not saved"
        try:
            for workspace in self._workspaces.values():
                workspace.load()
                self.listener.status_changed(workspace.status())
        except sqlite3.DatabaseError as reload_error:
            # The database cannot even be read back: keep what the windows hold.
            self._rescue(f"{location} cannot be read back ({reload_error})")
        except Exception:
            log.exception("reloading after a failed commit failed; reopening the store")
            self._store = None
            self._workspaces.clear()
        message = (
            f"the change could not be saved to {location} ({error}); nothing changed. "
            "Free disk space or check the file, then try again"
        )
        self.warn(message)
        return message

    def _rescue(self, damage: str) -> None:
        """The file under us is not our database any more: keep what is in memory."""
        store = self._store
        assert store is not None
        self.unit_of_work.abandon()
        try:
            fresh, moved_to = rescue_into_fresh_database(
                store, [workspace.in_memory() for workspace in self._workspaces.values()]
            )
        except Exception as error:
            log.exception("rescuing the windows of %s failed", store.location)
            self._store = None  # the next request opens the file again
            self._workspaces.clear()
            self.warn(
                f"{damage}, and no fresh database could be made beside it ({error}); "
                "the file was left where it is. Free disk space, then try again"
            )
            return
        self._store = fresh
        for workspace in self._workspaces.values():
            workspace.store = fresh
            workspace.load()
            self.listener.status_changed(workspace.status())
        self.warn(
            f"{damage}. It was moved to {moved_to}; the windows were saved into a fresh "
            f"database at {fresh.location}"
        )

    def index_some(self, prune: bool = True) -> bool | None:
        """Index a batch of archived rows for search: True if more wait, None if busy."""
        store = self._store
        if store is None or store.read_only is not None:
            return False
        if store.in_transaction:
            return None
        try:
            with store.write(wait=False):
                more = store.index.index_turn()
        except StorageError:  # another server holds the database
            return None
        except Exception:
            log.exception("indexing the archive failed; searches will index it")
            return False
        if more:
            return True
        if prune and self._retain(store):
            return None  # more to prune: after the next pause, so requests stay first
        try:
            store.checkpoint()  # idle: the WAL's pages go home off the answers' path
        except Exception:
            log.exception("checkpointing the WAL failed; SQLite will at its own limit")
        if prune:  # embed for search by meaning in the background while idle
            return meaning_for(store.location).index_some(self.idle.idle)
        return False

    def _retain(self, store: Store) -> bool:
        """Prune one batch of archives over their retention settings; True if more wait.

        Idle time only, never on an add's path. The pages freed go back to the
        file system (incremental vacuum) after each batch.
        """
        now = self.clock()
        for workspace in list(self._workspaces.values()):
            if not workspace.lifecycle.archive_over(now):
                continue
            try:
                pruned = workspace.lifecycle.prune(now, PRUNE_BATCH)
                if self.commit() is None and pruned:
                    store.retention.give_back_space()
            except (ContextError, StorageError) as error:
                log.info("pruning %s waits: %s", workspace.root_uri, error)
                return False
            except Exception:
                log.exception("pruning %s failed; it is tried again later", workspace.root_uri)
                return False
            return True
        return False

    # ------------------------------------------------------------ workspaces

    def workspace(self, root: str, folder: Path) -> Workspace:
        """The window of this folder, current with what other processes committed.

        A lookup: it takes no lock.
        """
        self.idle.request()
        store = self.store
        if not self.unit_of_work.open:
            self._catch_up()
            store = self.store  # a rescue may have replaced it
        workspace = self._workspaces.get(root)
        if workspace is None:
            workspace = self._workspaces[root] = Workspace(
                root,
                folder,
                store,
                self.unit_of_work,
                self.tokenizer,
                self.documents,
                self.clock,
                warn=self.warn,
            )
            self._watch()
        return workspace

    def folder_opened(self, root: str, folder: Path) -> None:
        """A client opened this folder: ready its workspace, once (``ready_ahead``)."""
        if root not in self._opened:
            self._opened.add(root)
            self._later(PREPARE_AFTER, lambda: self._ready_ahead(root, folder))

    def _ready_ahead(self, root: str, folder: Path) -> None:
        try:
            workspace = self.workspace(root, folder)
        except ContextError as error:  # the database: the client's requests say so
            log.info("the workspace %s is not made ready: %s", root, error.message)
            return
        workspace.ready_ahead(self.maps, worth_preparing(folder))

    def semantic_status(self) -> SemanticStatus:
        """Search by meaning in this process: available or not, and why."""
        return searching.process_semantic_status(self.store)

    def loaded_roots(self) -> list[str]:
        return list(self._workspaces)

    def count_tokens(self, text: str, encoding: Encoding | None) -> CountTokensResult:
        tokenizer = self.tokenizer(encoding)
        return CountTokensResult(tokens=tokenizer.count(text), encoding=tokenizer.encoding)  # type: ignore[arg-type]

    def document_changed(self, uri: str) -> None:
        for workspace in self._workspaces.values():
            workspace.follower.document_changed(uri)

    # ------------------------------------------------------------- the watch

    def _watch(self) -> None:
        if not self._watching:
            self._watching = True
            self._later(WATCH_INTERVAL, self.look)

    def look(self) -> None:
        """What changed elsewhere: commits of other processes, files on disk, editors' edits.

        Runs every ``WATCH_INTERVAL`` while windows are loaded; the changes it
        makes are committed and announced like a request's.
        """
        try:
            store = self._store
            if store is not None and not self.unit_of_work.open:
                self._catch_up()
                for workspace in list(self._workspaces.values()):
                    try:
                        workspace.follower.follow_files()
                    except ContextError as error:
                        log.warning("following the files of %s: %s", workspace.root_uri, error)
                    workspace.map.follow_map(self.maps)  # ranked off the loop when due
                self.commit()
        except Exception:
            log.exception("looking for changes failed; trying again shortly")
        finally:
            self._later(WATCH_INTERVAL, self.look)
