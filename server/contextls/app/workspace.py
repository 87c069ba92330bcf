"""One workspace folder's context: the window and every use case on it.

The workspace is its state (``WorkspaceState``: the window, its rows, its settings and the
one path of every change, with named hooks) and the objects that own each group of use
cases, reached as attributes: ``adding`` (regions, files, texts), ``symbols`` (definitions
by name), ``changes`` (remove, clear, pin, restore), ``config`` (settings), ``follower``
(the files behind items), ``views`` (whole or outline), ``map`` (the repository map),
``lifecycle`` (retention, forgetting) and ``reader`` (list, render, search; no lock).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contextls.app.adding import Adding
from contextls.app.changing import Changing
from contextls.app.configuring import Configuring
from contextls.app.following import Following
from contextls.app.lifecycle import Lifecycle
from contextls.app.reading import Reading
from contextls.app.repo_map import Mapping
from contextls.app.symbol_adding import SymbolAdding
from contextls.app.views import Viewing
from contextls.app.workspace_state import WorkspaceState, now_ms

__all__ = ["Workspace", "now_ms"]


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
