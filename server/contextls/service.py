"""The context service behind the server: settings, the store, one Workspace per folder.

The LSP layer calls it with plain values. ``route`` finds the workspace a
request is for; it is a lookup (it reads, and catches up with what other
processes committed) and takes no lock. A change takes the write lock
through the write burst (``burst``), which the transport commits before the
answers leave: ``commit`` is that gate.

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
from collections.abc import Callable, Sequence
from pathlib import Path

from contextls.bpe import tokenizer as offline_tokenizer
from contextls.burst import Listener, WriteBurst
from contextls.core.errors import ContextError
from contextls.core.tokens import Tokenizer
from contextls.files import resolve, uri_to_path
from contextls.idle import IdleIndexing, Later
from contextls.protocol import STORAGE_ENV, CountTokensResult, Encoding, ErrorCode, Settings
from contextls.rescue import rescue_into_fresh_database
from contextls.settings import parse_settings
from contextls.sources import Documents
from contextls.store import StorageError, Store
from contextls.workspace import Workspace, now_ms

log = logging.getLogger(__name__)

INDEX_BATCH = 500
"""Archive rows indexed per idle turn (a few milliseconds of the event loop)."""


class NoWorkspace(ContextError):
    code = ErrorCode.NO_WORKSPACE


class ContextService:
    def __init__(
        self,
        listener: Listener,
        documents: Documents,
        warn: Callable[[str], None],
        later: Later,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.listener = listener
        self.documents = documents
        self.warn = warn
        """Tell the person (window/showMessage); used for settings and storage trouble."""
        self.clock = clock
        self.settings = Settings()
        self.burst = WriteBurst(listener, self._catch_up, self._recover)
        self.idle = IdleIndexing(later, self.index_some)
        self._store: Store | None = None
        self._folders: dict[str, Path] = {}
        self._workspaces: dict[str, Workspace] = {}
        self._tokenizers: dict[str, Tokenizer] = {}

    # --------------------------------------------------------------- settings

    def configure(self, raw: object, initial: bool = False) -> None:
        """Apply settings from the client; invalid keys fall back with a warning."""
        parsed = parse_settings(raw, None if initial else self.settings)
        for warning in parsed.warnings:
            self.warn(warning)
        if parsed.ignored:
            log.info("ignoring unknown settings: %s", ", ".join(parsed.ignored))
        new = parsed.settings
        if not initial and (new.storage, new.durability) != (
            self.settings.storage,
            self.settings.durability,
        ):
            self._close_store()
        self.settings = new
        for workspace in list(self._workspaces.values()):
            self._apply(workspace, new)

    def _apply(self, workspace: Workspace, settings: Settings) -> None:
        try:
            workspace.apply_settings(settings, self.tokenizer(settings.encoding))
        except ContextError as error:
            self.warn(
                f"{error.message}; keeping maxItems {workspace.settings.max_items}, "
                f"maxTokens {workspace.settings.max_tokens:,}"
            )

    def tokenizer(self, encoding: Encoding | None = None) -> Tokenizer:
        name = encoding or self.settings.encoding
        if name not in self._tokenizers:
            self._tokenizers[name] = offline_tokenizer(name)
        return self._tokenizers[name]

    # ---------------------------------------------------------------- storage

    @property
    def store(self) -> Store:
        if self._store is None:
            location = self.settings.storage or os.environ.get(STORAGE_ENV) or None
            try:
                self._store = Store(location, self.settings.durability)
            except (StorageError, OSError) as error:
                raise ContextError(
                    f"the context database cannot be opened: {error}", ErrorCode.STORAGE
                ) from error
            if self._store.moved_aside is not None:
                self.warn(
                    f"the context database was corrupt; it was moved to "
                    f"{self._store.moved_aside} and contextls started with an empty one"
                )
            if self._store.read_only is not None:
                self.warn(f"{self._store.read_only}: the context can be read, not changed")
        return self._store

    def commit(self) -> str | None:
        """Commit the open write burst (the outbox calls this before answers leave).

        Returns why it failed, for the answers that reported a change, or None.
        """
        if not self.burst.open:
            return None
        failure = self.burst.commit()
        if failure is None:
            self.idle.committed()
        return failure

    def _close_store(self) -> None:
        if self._store is not None:
            self.commit()
            self.burst.abandon()  # nothing is left open; it lets go of the store
            while self.index_some():  # searchable by the next reader, even a read-only one
                pass
            self._store.close()
        self._store = None
        self._workspaces.clear()

    def close(self) -> None:
        self._close_store()

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
        self.burst.abandon()
        fresh, moved_to = rescue_into_fresh_database(store, list(self._workspaces.values()))
        self._store = fresh
        for workspace in self._workspaces.values():
            workspace.store = fresh
            workspace.load()
            self.listener.status_changed(workspace.status())
        self.warn(
            f"{damage}. It was moved to {moved_to}; the windows were saved into a fresh "
            f"database at {fresh.location}"
        )

    def index_some(self) -> bool | None:
        """Index a batch of archived rows for search: True if more wait, None if busy."""
        store = self._store
        if store is None or store.read_only is not None:
            return False
        if store.in_transaction:
            return None
        try:
            with store.write(wait=False):
                indexed = store.index_backlog(INDEX_BATCH)
        except StorageError:  # another server holds the database
            return None
        except Exception:
            log.exception("indexing the archive failed; searches will index it")
            return False
        if indexed == INDEX_BATCH:
            return True
        try:
            store.checkpoint()  # idle: the WAL's pages go home off the answers' path
        except Exception:
            log.exception("checkpointing the WAL failed; SQLite will at its own limit")
        return False

    # ---------------------------------------------------------------- folders

    def set_folders(self, added: Sequence[str], removed: Sequence[str] = ()) -> None:
        for uri in removed:
            key = _normalize_uri(uri)
            self._folders.pop(key, None)
            self._workspaces.pop(key, None)
        for uri in added:
            try:
                folder = resolve(uri_to_path(uri, "$.workspaceFolders"))
                if folder == Path("/") or folder == Path.home().resolve():
                    raise ContextError(
                        f"{folder} is too wide to be a workspace folder (every file under it "
                        "could be added); open a project folder instead"
                    )
                self._folders[_normalize_uri(uri)] = folder
            except ContextError as error:
                self.warn(f"workspace folder {uri} is ignored: {error.message}")

    def route(self, name: str | None = None, uri: str | None = None) -> Workspace:
        """The workspace a request is for: named, else the folder holding ``uri``, else the only.

        A lookup: it takes no lock. It catches up with other processes' commits
        first, so what a request reads is current.
        """
        root = self._root(name, uri)
        self.idle.request()
        store = self.store
        if not self.burst.open:
            self._catch_up()
            store = self.store  # a rescue may have replaced it
        workspace = self._workspaces.get(root)
        if workspace is None:
            workspace = self._workspaces[root] = Workspace(
                root,
                self._folders[root],
                store,
                self.burst,
                self.settings,
                self.tokenizer(),
                self.documents,
                self.clock,
            )
            # The store may hold a window saved under other limits.
            self._apply(workspace, self.settings)
        return workspace

    def _root(self, name: str | None, uri: str | None) -> str:
        if not self._folders:
            raise NoWorkspace(
                "no workspace folder is open; open a folder (or a project) in the editor, "
                "or start contextls with a workspace folder"
            )
        if name:
            return self._named(name)
        if uri:
            path = resolve(uri_to_path(uri))
            holders = [
                root for root, folder in self._folders.items() if path.is_relative_to(folder)
            ]
            if not holders:
                raise ContextError(
                    f"{path} is outside the workspace folders ({self._folder_list()})",
                    ErrorCode.OUTSIDE_WORKSPACE,
                )
            return max(holders, key=lambda root: len(self._folders[root].parts))
        if len(self._folders) == 1:
            return next(iter(self._folders))
        raise NoWorkspace(
            f"{len(self._folders)} workspace folders are open; say which with `workspace` "
            f"({self._folder_list()})"
        )

    def _named(self, name: str) -> str:
        key = _normalize_uri(name)
        if key in self._folders:
            return key
        try:
            path = resolve(uri_to_path(name, "$.workspace"))
        except ContextError:
            path = None
        for root, folder in self._folders.items():
            if folder == path or folder.name == name:
                return root
        raise NoWorkspace(f"{name} is not an open workspace folder ({self._folder_list()})")

    def _folder_list(self) -> str:
        return ", ".join(str(folder) for folder in self._folders.values())

    # --------------------------------------------------------------- requests

    def announce(self, roots: list[str] | None = None) -> None:
        """Push the status of these folders (all by default), so status bars fill at once."""
        for root in roots if roots is not None else list(self._folders):
            key = _normalize_uri(root)
            if key in self._folders:
                self.listener.status_changed(self.route(key).status())

    def count_tokens(self, text: str, encoding: Encoding | None) -> CountTokensResult:
        tokenizer = self.tokenizer(encoding)
        return CountTokensResult(tokens=tokenizer.count(text), encoding=tokenizer.encoding)  # type: ignore[arg-type]

    def document_changed(self, uri: str, text: str | None) -> None:
        for workspace in self._workspaces.values():
            workspace.document_changed(uri, text)


def _normalize_uri(uri: str) -> str:
    return uri.rstrip("/") if uri.count("/") > 3 else uri
