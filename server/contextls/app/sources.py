"""Where a workspace's text comes from: the editor's open buffer, else the file on disk."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from contextls.app.files import check_size, read_text_file, resolve, uri_to_path
from contextls.core.errors import ContextError
from contextls.core.items import StaleReason
from contextls.protocol import ErrorCode

SNIFF_CHARS = 8192
"""How far into an editor's buffer to look for a NUL, as for a file on disk."""

Documents = Callable[[str], str | None]
"""The text of a URI the editor has open and synced, else None."""


@dataclass(frozen=True, slots=True)
class Gone:
    """Why a file has no text to follow now."""

    why: StaleReason
    error: ContextError | None = None
    """What reading it said, when it is ``unreadable`` (binary, too large...)."""


class Sources:
    def __init__(self, root: Path, documents: Documents) -> None:
        self.root = root
        self.documents = documents

    def locate(self, uri: str) -> tuple[Path, str]:
        """The resolved path of ``uri`` and its path relative to the root (symlinks resolved)."""
        path = resolve(uri_to_path(uri))
        if not path.is_relative_to(self.root):
            raise ContextError(
                f"{path} is outside the workspace folder {self.root}", ErrorCode.OUTSIDE_WORKSPACE
            )
        return path, path.relative_to(self.root).as_posix() or "."

    def text(self, uri: str, path: Path, rel: str, max_bytes: int) -> str:
        """What the person sees: the editor's buffer when it has one, else the disk."""
        text = self.documents(uri)
        if text is None:
            return read_text_file(path, rel, max_bytes, self.root)
        check_size(len(text.encode()), rel, max_bytes)
        if "\0" in text[:SNIFF_CHARS]:
            raise ContextError(f"{rel} is binary", ErrorCode.BINARY_FILE)
        return text

    def on_disk(self, rel: str, max_bytes: int) -> str | Gone:
        """The file's text on disk, or why there is none to follow (deleted, unreadable,
        or it now leads outside the workspace: a symlink put in its place)."""
        try:
            return read_text_file(self.root / rel, rel, max_bytes, self.root)
        except ContextError as error:
            if error.code == ErrorCode.OUTSIDE_WORKSPACE:
                return Gone("outside")
            if not os.path.lexists(self.root / rel):
                return Gone("deleted")
            return Gone("unreadable", error)

    def current(self, rel: str, uri: object, max_bytes: int) -> str | Gone:
        """The file's text now (the editor's buffer, else the disk), or why there is none."""
        if isinstance(uri, str):
            text = self.documents(uri)
            if text is not None:
                return text
        return self.on_disk(rel, max_bytes)


Signature = tuple[int, int, int] | None
"""A file's (inode, size, mtime in ns), or None when it is missing."""


class FileWatch:
    """Which files changed on disk since the last look, by one ``stat`` each.

    A file seen for the first time counts as changed, so it is read once and
    compared with what the window holds (it may have changed while no server ran).
    """

    def __init__(self, root: Path) -> None:
        self._root = str(root)
        self._seen: dict[str, tuple[str, Signature]] = {}
        """rel -> (absolute path, signature at the last look)."""

    def changed(self, paths: Iterable[str]) -> list[str]:
        seen: dict[str, tuple[str, Signature]] = {}
        changed: list[str] = []
        before = self._seen
        for rel in paths:
            known = before.get(rel)
            where = known[0] if known is not None else os.path.join(self._root, rel)
            try:
                info = os.stat(where)
                signature: Signature = (info.st_ino, info.st_size, info.st_mtime_ns)
            except OSError:
                signature = None
            seen[rel] = (where, signature)
            if known is None or known[1] != signature:
                changed.append(rel)
        self._seen = seen
        return changed

    def saw(self, rel: str, signature: Signature) -> None:
        """``rel`` was just read with this signature: the next look reads it only if it
        changed since."""
        self._seen[rel] = (os.path.join(self._root, rel), signature)

    def forget(self) -> None:
        """Look at every file again (after the window was reloaded from the store)."""
        self._seen.clear()
