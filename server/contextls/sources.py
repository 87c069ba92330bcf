"""Where a workspace's text comes from: the editor's open buffer, else the file on disk."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from contextls.core.errors import ContextError
from contextls.files import check_size, read_text_file, resolve, uri_to_path
from contextls.protocol import ErrorCode

SNIFF_CHARS = 8192
"""How far into an editor's buffer to look for a NUL, as for a file on disk."""

Documents = Callable[[str], str | None]
"""The text of a URI the editor has open and synced, else None."""


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
            return read_text_file(path, rel, max_bytes)
        check_size(len(text.encode()), rel, max_bytes)
        if "\0" in text[:SNIFF_CHARS]:
            raise ContextError(f"{rel} is binary", ErrorCode.BINARY_FILE)
        return text

    def on_disk(self, rel: str, max_bytes: int) -> str | None:
        """The file's text on disk, or None when it cannot be read as text."""
        try:
            return read_text_file(self.root / rel, rel, max_bytes)
        except ContextError:
            return None
