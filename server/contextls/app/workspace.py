"""One workspace folder's context: the window and every use case on it.

The workspace is its state (``WorkspaceState``: the window, its rows, its settings and the
one path of every change, with named hooks) and the objects that own each group of use
cases, reached as attributes: ``adding`` (regions, files, texts), ``symbols`` (definitions
by name), ``changes`` (remove, clear, pin, restore), ``config`` (settings), ``follower``
(the files behind items), ``views`` (whole or outline), ``map`` (the repository map),
``lifecycle`` (retention, forgetting) and ``reader`` (list, render, search; no lock).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from contextls.app.adding import Adding
from contextls.app.changing import Changing
from contextls.app.configuring import Configuring
from contextls.app.following import Following
from contextls.app.lifecycle import Lifecycle
from contextls.app.map_process import MapProcess
from contextls.app.reading import Reading
from contextls.app.repo_map import Mapping
from contextls.app.symbol_adding import SymbolAdding
from contextls.app.views import Viewing
from contextls.app.workspace_state import WorkspaceState, now_ms

__all__ = ["Workspace", "now_ms"]
log = logging.getLogger(__name__)


class Workspace(WorkspaceState):
    """One workspace folder's window, archive and settings, and what can be done to them."""

    def __init__(self, root_uri: str, root_path: Path, *args: Any, **kwargs: Any) -> None:
        super().__init__(root_uri, root_path, *args, **kwargs)
        self.follower = Following(self)
        self.views = Viewing(self, self.follower)
        self.adding = Adding(self)
        self.symbols = SymbolAdding(self, self.adding)
        self.changes = Changing(self)
        self.config = Configuring(self)
        self.map = Mapping(self, self.adding)
        self.lifecycle = Lifecycle(self)
        self.reader = Reading(self)

    def ready_ahead(self, maps: MapProcess, prepare_map: bool) -> asyncio.Future[None]:
        """What a workspace just opened will soon need, begun with nobody waiting: its
        tokenizer loaded in a thread (its first change would load it on the event loop,
        every client waiting ~0.2 s), and its map prepared when ``prepare_map``. The
        tokenizer's load, to be awaited by whoever wants to."""
        loading = asyncio.get_running_loop().run_in_executor(None, self.tokenizer.load)
        loading.add_done_callback(_loaded)
        if prepare_map:
            self.map.start_preparing(maps)
        return loading


def _loaded(loading: asyncio.Future[None]) -> None:
    if not loading.cancelled() and loading.exception() is not None:
        # Ahead of need: the first change that counts says what is wrong, if it still is.
        log.info("a tokenizer could not be loaded ahead: %s", loading.exception())
