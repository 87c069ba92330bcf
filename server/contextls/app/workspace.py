"""One workspace folder's context: the window and every use case on it.

The state and the one path of every change are ``WorkspaceState``; each group
of use cases is a module of its own (adding, adding by a symbol's name, changing,
configuring, following, views, the repository map, lifecycle, reading). Reading (list, render,
status, search) takes no lock.
"""

from __future__ import annotations

from contextls.app.changing import Changing
from contextls.app.configuring import Configuring
from contextls.app.lifecycle import Lifecycle
from contextls.app.reading import Reading
from contextls.app.repo_map import Mapping
from contextls.app.workspace_state import now_ms

__all__ = ["Workspace", "now_ms"]


class Workspace(Mapping, Changing, Configuring, Lifecycle, Reading):
    """One workspace folder's window, archive and settings, and what can be done to them."""
