"""One workspace folder's context: the window and every use case on it.

The state and the one path of every change are ``WorkspaceState``; each group
of use cases is a module of its own (adding, changing, following, lifecycle,
reading). Reading (list, render, status, search) takes no lock.
"""

from __future__ import annotations

from contextls.app.adding import Adding
from contextls.app.changing import Changing
from contextls.app.following import Following
from contextls.app.lifecycle import Lifecycle
from contextls.app.reading import Reading
from contextls.app.workspace_state import now_ms

__all__ = ["Workspace", "now_ms"]


class Workspace(Adding, Changing, Following, Lifecycle, Reading):
    """One workspace folder's window, archive and settings, and what can be done to them."""
