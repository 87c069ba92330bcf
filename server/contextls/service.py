"""The context service behind the server: settings, the store, one Workspace per folder.

The LSP layer calls it with plain values; it routes each request to the right
workspace and owns everything that outlives a single request.

Group commit: the first request of a burst takes the store's write lock and
catches up with what other server processes committed; the requests that
follow run under the same lock, and then everything they changed is written
and committed at once (``pacing`` says when: within a few milliseconds while
requests keep coming, 25 ms after a lone one). A request never waits for
SQLite. Another process waits for the lock (its busy timeout is 5 s) and
sees our changes as soon as it has it. The editors hear of a burst once it
is committed: one status push, and one eviction notice per reason.
Shutting down, closing the store and switching storage commit first. What a
failed commit could not write is not hidden: the windows are reloaded from
the database, the editors get the new status and a warning.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from contextls.core.errors import ContextError
from contextls.core.tokens import Tokenizer
from contextls.files import uri_to_path
from contextls.pacing import Pacer, Timing
from contextls.protocol import CountTokensResult, Encoding, ErrorCode, Settings
from contextls.settings import parse_settings
from contextls.store import StorageError, Store
from contextls.workspace import Listener, Workspace, now_ms

log = logging.getLogger(__name__)

STORAGE_ENV = "CONTEXTLS_STORAGE"
"""Where the database lives when the client's settings do not say (tests, scripts)."""

INDEX_BATCH = 500
"""Archive rows indexed per idle turn (a few milliseconds of the event loop)."""


class NoWorkspace(ContextError):
    code = ErrorCode.NO_WORKSPACE


class ContextService:
    def __init__(
        self,
        listener: Listener,
        documents: Callable[[str], str | None],
        warn: Callable[[str], None],
        timing: Timing,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.listener = listener
        self.pacer = Pacer(timing, self.commit, self._index_some)
        self.documents = documents
        self.warn = warn
        """Tell the person (window/showMessage); used for settings and storage trouble."""
        self.clock = clock
        self.settings = Settings()
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
        if not initial and new.storage != self.settings.storage:
            self._close_store()
        self.settings = new
        if self._workspaces:
            self.begin()
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
            self._tokenizers[name] = Tokenizer(name)
        return self._tokenizers[name]

    # ---------------------------------------------------------------- storage

    @property
    def store(self) -> Store:
        if self._store is None:
            try:
                self._store = Store(self.settings.storage or os.environ.get(STORAGE_ENV) or None)
            except (StorageError, OSError) as error:
                raise ContextError(
                    f"the context database cannot be opened: {error}", ErrorCode.STORAGE
                ) from error
            if self._store.moved_aside is not None:
                self.warn(
                    f"the context database was corrupt; it was moved to "
                    f"{self._store.moved_aside} and contextls started with an empty one"
                )
        return self._store

    def _close_store(self) -> None:
        if self._store is not None:
            self.commit()
            self._store.close()
        self._store = None
        self._workspaces.clear()

    def close(self) -> None:
        self._close_store()

    def begin(self) -> None:
        """Hold the write lock for this burst, caught up with other processes."""
        store = self.store
        began = store.begin()
        self.pacer.request(began)
        if not began:
            return
        for workspace in self._workspaces.values():
            if workspace.catch_up():
                self.listener.status_changed(workspace.status())

    def commit(self) -> None:
        """Write every workspace's pending changes and commit them together."""
        store = self._store
        if store is None or not store.in_transaction:
            return
        try:
            for workspace in self._workspaces.values():
                workspace.write_pending()
            store.commit()
        except Exception as error:
            log.exception("committing to %s failed", store.location)
            self._recover(store, error)
            return
        for workspace in self._workspaces.values():
            workspace.announce()
        self.pacer.committed()

    def _index_some(self) -> bool | None:
        """Index a batch of archived rows for search: True if more wait, None if busy."""
        store = self._store
        if store is None:
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
        return indexed == INDEX_BATCH

    def _recover(self, store: Store, error: Exception) -> None:
        try:
            store.rollback()
            for workspace in self._workspaces.values():
                workspace.reload()
                self.listener.status_changed(workspace.status())
        except Exception:
            log.exception("reloading after a failed commit failed; reopening the store")
            self._store = None
            self._workspaces.clear()
        self.warn(
            f"the latest changes could not be saved to {store.location} ({error}); "
            "the context was reloaded from the database"
        )

    # ---------------------------------------------------------------- folders

    def set_folders(self, added: Sequence[str], removed: Sequence[str] = ()) -> None:
        if removed:
            self.commit()
        for uri in removed:
            key = _normalize_uri(uri)
            self._folders.pop(key, None)
            self._workspaces.pop(key, None)
        for uri in added:
            try:
                self._folders[_normalize_uri(uri)] = uri_to_path(
                    uri, "$.workspaceFolders"
                ).resolve()
            except ContextError as error:
                self.warn(f"workspace folder {uri} is ignored: {error.message}")

    @property
    def folders(self) -> dict[str, Path]:
        return dict(self._folders)

    def workspace(self, name: str | None = None, uri: str | None = None) -> Workspace:
        """The workspace a request is for: named, else the folder holding ``uri``, else the only."""
        root = self._route(name, uri)
        self.begin()
        workspace = self._workspaces.get(root)
        if workspace is None:
            workspace = self._workspaces[root] = Workspace(
                root,
                self._folders[root],
                self.store,
                self.settings,
                self.tokenizer(),
                self.listener,
                self.documents,
                self.begin,
                self.clock,
            )
            # The store may hold a window saved under other limits.
            self._apply(workspace, self.settings)
        return workspace

    def _route(self, name: str | None, uri: str | None) -> str:
        if not self._folders:
            raise NoWorkspace(
                "no workspace folder is open; open a folder (or a project) in the editor, "
                "or start contextls with a workspace folder"
            )
        if name:
            return self._named(name)
        if uri:
            path = uri_to_path(uri).resolve()
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
            path = uri_to_path(name, "$.workspace").resolve()
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
                self.listener.status_changed(self.workspace(key).status())

    def count_tokens(self, text: str, encoding: Encoding | None) -> CountTokensResult:
        tokenizer = self.tokenizer(encoding)
        return CountTokensResult(tokens=tokenizer.count(text), encoding=tokenizer.encoding)  # type: ignore[arg-type]

    def document_changed(self, uri: str, text: str | None) -> None:
        for workspace in self._workspaces.values():
            workspace.document_changed(uri, text)


def _normalize_uri(uri: str) -> str:
    return uri.rstrip("/") if uri.count("/") > 3 else uri
