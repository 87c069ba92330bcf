"""One CLI invocation's connection: the spawned server, the workspace, the evictions seen."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from contextls.protocol import STORAGE_ENV, ContextItem
from contextls_client.config_store import ConfigStore
from contextls_client.console import Console
from contextls_client.human import eviction_lines
from contextls_client.lsp_client import ContextlsClient

IN_MEMORY: Final = ":memory:"


class UsageError(Exception):
    """The command line asks for something impossible; exit code 2."""


@dataclass(frozen=True)
class Place:
    """Which workspace and which database one invocation works on."""

    root: Path
    storage: str | None
    """A database path, ``:memory:``, or None for the server's default."""

    @property
    def root_uri(self) -> str:
        return self.root.as_uri()

    @classmethod
    def from_options(cls, workspace: str | None, storage: str | None) -> Place:
        """``--workspace`` (else the current directory), ``--storage`` (else $CONTEXTLS_STORAGE)."""
        root = Path(workspace or os.getcwd()).expanduser().resolve()
        if not root.is_dir():
            raise UsageError(f"workspace {root} is not a directory")
        chosen = storage if storage is not None else os.environ.get(STORAGE_ENV) or None
        if chosen is not None and chosen != IN_MEMORY:
            chosen = str(Path(chosen).expanduser().resolve())
        return cls(root, chosen)

    def initialization_options(self, config: ConfigStore) -> dict[str, Any]:
        """The settings ``config set`` chose for this workspace, plus the storage path."""
        options = config.settings_for(self.root_uri)
        if self.storage is not None:
            options["storage"] = self.storage
        return options


@dataclass
class Session:
    """A started, initialised client bound to one workspace."""

    client: ContextlsClient
    place: Place
    console: Console
    _reported: set[str] = field(default_factory=set)
    _deferred: list[ContextItem] = field(default_factory=list)

    @property
    def workspace(self) -> str:
        """The value every request's ``workspace`` field carries."""
        return self.place.root_uri

    def evicted(self, items: Iterable[ContextItem], defer: bool = False) -> None:
        """Report items a request pushed out of the window (once each).

        ``defer`` holds them until the end of the command, while a progress bar
        owns stderr.
        """
        fresh = [item for item in items if item.id not in self._reported]
        self._reported.update(item.id for item in fresh)
        if defer:
            self._deferred.extend(fresh)
        else:
            self.console.note(*eviction_lines(fresh))

    def flush_evictions(self) -> None:
        """Print deferred evictions and those only announced by ``contextls/didEvict``.

        Called after ``shutdown``: its answer comes after every notification the
        server sent before it, so nothing is missed.
        """
        pending, self._deferred = self._deferred, []
        for notice in self.client.evictions():
            pending.extend(item for item in notice.items if item.id not in self._reported)
            self._reported.update(item.id for item in notice.items)
        self.console.note(*eviction_lines(pending))


@contextlib.asynccontextmanager
async def open_session(
    place: Place, console: Console, config: ConfigStore, client: ContextlsClient | None = None
) -> AsyncIterator[Session]:
    """Spawn the server, initialise it for ``place``, and shut it down afterwards."""
    session = Session(client or ContextlsClient(), place, console)
    try:
        async with session.client:
            await session.client.initialize(place.root, place.initialization_options(config))
            yield session
    finally:
        session.flush_evictions()


@dataclass
class Invocation:
    """Everything a command handler needs: parsed arguments and where to work."""

    args: Any
    place: Place
    console: Console
    config: ConfigStore

    def session(self) -> contextlib.AbstractAsyncContextManager[Session]:
        """Spawn and initialise a server for this invocation."""
        return open_session(self.place, self.console, self.config)

    def display_path(self, path: Path) -> str:
        """A path relative to the current directory when it is below it."""
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)
