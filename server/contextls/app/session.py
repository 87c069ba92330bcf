"""One client's session: its workspace folders and its settings, over the shared service.

A process serves one session (``contextls serve --stdio``) or many (the
daemon); every session sees the same windows (``service.ContextService``).
What belongs to a client stays here: which folders it opened (a request is
routed among them), the window settings it asked for (written to a window
that has none of its own yet), and its condense endpoint.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from contextls.app.files import resolve, uri_to_path
from contextls.app.service import ContextService, NoWorkspace
from contextls.app.settings import parse_settings
from contextls.app.workspace import Workspace
from contextls.core.errors import ContextError, cut
from contextls.protocol import (
    DidWarnParams,
    ErrorCode,
    NoWorkspaceData,
    RefusedFolder,
    Settings,
)

log = logging.getLogger(__name__)


class Session:
    def __init__(
        self, service: ContextService, warn: Callable[[str | DidWarnParams], None]
    ) -> None:
        self.service = service
        self.warn = warn
        """Tell this client's person (window/showMessage)."""
        self.settings = Settings()
        """What this client sent; the window keys are only its wish (see ``configure``)."""
        self.folders: dict[str, Path] = {}
        self.refused: dict[str, str] = {}
        """Folders a client gave that cannot be workspace folders: uri -> why."""
        self._wish: dict[str, object] = {}
        self._seeded: set[str] = set()
        self.client = ""
        """The client's name (``clientInfo.name``): refusals speak its person's words."""

    # --------------------------------------------------------------- settings

    def configure(self, raw: object, initial: bool = False) -> None:
        """Settings from the client; an invalid key falls back with a warning.

        Storage and durability choose the database (the daemon keeps its own).
        The window keys are written to this client's windows that have no
        settings of their own yet; sent again while running (the person changed
        them), they change the windows, as ``contextls/configure`` does.
        """
        parsed = parse_settings(raw, None if initial else self.settings)
        for warning in parsed.warnings:
            self.warn(warning)
        if parsed.ignored:
            log.info("ignoring unknown settings: %s", ", ".join(parsed.ignored))
        self.settings = parsed.settings
        refused = self.service.use_storage(parsed.settings.storage, parsed.settings.durability)
        asked = parsed.settings.storage is not None or "durability" in parsed.given
        if refused is not None and asked:
            self.warn(refused)
        wish = parsed.window_wish()
        if initial:
            self._wish = wish
            return
        self._wish.update(wish)
        if not wish:
            return
        for root in list(self.folders):
            try:
                self.route(root).config.configure(wish)
            except ContextError as error:
                self.warn(f"{error.message}; the window keeps its settings")

    # ---------------------------------------------------------------- folders

    def set_folders(self, added: Sequence[str], removed: Sequence[str] = ()) -> None:
        for uri in removed:
            self.folders.pop(normalize_uri(uri), None)
        for uri in added:
            try:
                folder = resolve(uri_to_path(uri, "$.workspaceFolders"))
                why_not = unfit_folder(folder, self.settings.allow_any_folder)
                if why_not:
                    raise ContextError(why_not)
                self.folders[normalize_uri(uri)] = folder
                self.refused.pop(normalize_uri(uri), None)
                self.service.folder_opened(normalize_uri(uri), folder)
            except ContextError as error:
                self.refused[normalize_uri(uri)] = error.message
                self.warn(
                    DidWarnParams(
                        message=f"workspace folder {cut(uri)} is ignored: {error.message}",
                        workspace=uri,
                        folder=RefusedFolder(folder=uri, reason=error.message),
                    )
                )

    def route(self, name: str | None = None, uri: str | None = None) -> Workspace:
        """The workspace a request is for: named, else the folder holding ``uri``, else the only."""
        root = self._root(name, uri)
        workspace = self.service.workspace(root, self.folders[root])
        if root not in self._seeded:
            self._seeded.add(root)
            try:
                workspace.config.seed(self._wish)
            except ContextError as error:
                self.warn(f"{error.message}; the window keeps its settings")
        # Edits are folded into items at the process's next look; a request first takes
        # those its client (or any) sent before it, so what it reads or renders has them.
        try:
            workspace.follower.follow_edits()
        except ContextError as error:
            log.warning("following the edits of %s: %s", root, error)
        return workspace

    def announce(self, roots: list[str] | None = None) -> None:
        """Push the status of these folders (all by default), so status bars fill at once."""
        for root in roots if roots is not None else list(self.folders):
            key = normalize_uri(root)
            if key in self.folders:
                self.service.listener.status_changed(self.route(key).status())

    def _root(self, name: str | None, uri: str | None) -> str:
        if not self.folders:
            refused = [RefusedFolder(folder=uri, reason=why) for uri, why in self.refused.items()]
            raise NoWorkspace(self._no_folder(), data=NoWorkspaceData(refused=refused))
        if name:
            return self._named(name)
        if uri:
            path = resolve(uri_to_path(uri))
            holders = [root for root, folder in self.folders.items() if path.is_relative_to(folder)]
            if not holders:
                raise ContextError(
                    f"{path} is outside the workspace folders ({self._folder_list()})",
                    ErrorCode.OUTSIDE_WORKSPACE,
                )
            return max(holders, key=lambda root: len(self.folders[root].parts))
        if len(self.folders) == 1:
            return next(iter(self.folders))
        raise NoWorkspace(
            f"{len(self.folders)} workspace folders are open; say which with `workspace` "
            f"({self._folder_list()})"
        )

    def _named(self, name: str) -> str:
        key = normalize_uri(name)
        if key in self.folders:
            return key
        try:
            path = resolve(uri_to_path(name, "$.workspace"))
        except ContextError:
            path = None
        for root, folder in self.folders.items():
            if folder == path or folder.name == name:
                return root
        raise NoWorkspace(f"{cut(name)} is not an open workspace folder ({self._folder_list()})")

    def _no_folder(self) -> str:
        if self.refused:  # the reason, not only the advice: the person passed one
            reasons = "; ".join(self.refused.values())
            if self.client in COMMAND_LINE_CLIENTS:
                reasons = reasons.replace(
                    "set allowAnyFolder", "set CONTEXTLS_ALLOW_ANY_FOLDER=1"
                ).replace("open a project folder", "pass --workspace DIR of a project")
            return f"no workspace folder: {reasons}"
        if self.client in COMMAND_LINE_CLIENTS:
            return (
                "no workspace folder: pass --workspace DIR, or run contextls inside the "
                "project (the nearest folder with a .contextls marker, else the git "
                "repository's root, else the current directory)"
            )
        return (
            "no workspace folder is open; open a folder (or a project) in the editor, "
            "or start contextls with a workspace folder"
        )

    def _folder_list(self) -> str:
        return ", ".join(str(folder) for folder in self.folders.values())


SYSTEM_TREES: Final = tuple(
    Path(name) for name in ("/proc", "/sys", "/dev", "/etc", "/boot", "/run", "/var/run")
)
"""Folders whose every subfolder belongs to the system, never to a project."""
TOO_WIDE: Final = frozenset(
    Path(name)
    for name in (
        "/",
        "/usr",
        "/var",
        "/bin",
        "/sbin",
        "/lib",
        "/lib64",
        "/opt",
        "/srv",
        "/home",
        "/tmp",
        "/root",
        "/mnt",
        "/media",
        "/Users",
        "/System",
        "/Library",
        "/private",
    )
)
"""Folders that hold many projects or the system's own files."""


def unfit_folder(folder: Path, allow_any: bool) -> str:
    """Why ``folder`` cannot be a workspace folder (every file under it could be added
    and sent to a model), or "" when it can."""
    wide = folder in TOO_WIDE or folder == Path.home().resolve()
    if wide:
        return (
            f"{folder} is too wide to be a workspace folder (every file under it could be "
            "added); open a project folder instead"
        )
    if allow_any:
        return ""
    if any(folder == tree or folder.is_relative_to(tree) for tree in SYSTEM_TREES):
        return f"{folder} is a system folder, not a project; set allowAnyFolder to use it anyway"
    try:
        owner = folder.stat().st_uid
    except OSError:
        return ""
    if owner != os.getuid():
        return (
            f"{folder} belongs to another user (uid {owner}); set allowAnyFolder to use it anyway"
        )
    return ""


COMMAND_LINE_CLIENTS = frozenset({"contextls-cli", "contextls-mcp"})
"""Clients whose person picks the workspace with ``--workspace``, not an editor folder."""


def normalize_uri(uri: str) -> str:
    return uri.rstrip("/") if uri.count("/") > 3 else uri
