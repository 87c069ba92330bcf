"""Which workspace a command run in a folder works on, with ``os.path`` only (every CLI
command asks it before anything else)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

MARKER: Final = ".contextls"
"""A file or directory that makes its folder a workspace (for a project without git, or
a part of a repository that should have a window of its own)."""


def project_root(start: str) -> str:
    """The workspace of a command run in ``start`` (a resolved absolute path): the nearest
    folder holding a ``.contextls`` marker, else the nearest holding ``.git`` (the
    repository's root), else ``start`` itself. The search stops below your home
    directory and ``/``, which are never workspaces (a dotfiles repository in ~ does not
    make ~ one)."""
    home = os.path.realpath(os.path.expanduser("~"))
    git_root: str | None = None
    folder = start
    while True:
        if folder in (home, "/"):
            break
        if os.path.exists(os.path.join(folder, MARKER)):
            return folder
        if git_root is None and os.path.exists(os.path.join(folder, ".git")):
            git_root = folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return git_root or start
