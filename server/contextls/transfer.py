"""Export and import: a window (and its archive) as one document, and its checks.

An exported item carries its path relative to the workspace, never the
absolute URI of the machine it came from; an import re-roots it under the
workspace it goes into. Everything in a document is checked before anything
changes: a format or version this contextls does not read, a path that
would leave the workspace, an item too large, too many items. One bad item
refuses the whole document, with a message naming it.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Final

from contextls.core.errors import ContextError, InvalidParams
from contextls.core.items import Item
from contextls.protocol import (
    EXPORT_FORMAT,
    EXPORT_VERSION,
    RANGED_KINDS,
    ErrorCode,
    ExportDocument,
    ExportItem,
)

MAX_IMPORTED_ITEMS: Final = 100_000
"""More items than an archive keeps by default ten times over: refused as hostile."""


def exported(item: Item, archived_at: int | None = None, reason: str | None = None) -> ExportItem:
    metadata = {key: value for key, value in item.metadata.items() if key != "uri"}
    return ExportItem(
        id=item.id,
        kind=item.kind,
        content=item.content,
        metadata=metadata,
        timestamp=item.timestamp,
        pinned=item.pinned,
        archived_at=archived_at,
        reason=reason,
    )


def check_import(
    document: ExportDocument, root: Path, max_bytes: int
) -> tuple[list[ExportItem], list[ExportItem]]:
    """The document's window and archive items, re-rooted under ``root``; or a refusal."""
    if document.format != EXPORT_FORMAT:
        raise InvalidParams(
            "$.document.format", f"this is not a contextls export ({document.format!r})"
        )
    if document.version != EXPORT_VERSION:
        newer = "a newer" if document.version > EXPORT_VERSION else "an unknown"
        raise InvalidParams(
            "$.document.version",
            f"export version {document.version} is {newer} format; this contextls reads "
            f"version {EXPORT_VERSION}",
        )
    count = len(document.window) + len(document.archive)
    if count > MAX_IMPORTED_ITEMS:
        raise InvalidParams(
            "$.document", f"{count:,} items is more than an import takes ({MAX_IMPORTED_ITEMS:,})"
        )
    seen: set[str] = set()
    for where, items in (("window", document.window), ("archive", document.archive)):
        for index, item in enumerate(items):
            field = f"$.document.{where}[{index}]"
            if item.id in seen:
                raise InvalidParams(f"{field}.id", f"{item.id} appears twice in the document")
            seen.add(item.id)
            size = len(item.content.encode())
            if size > max_bytes:
                raise ContextError(
                    f"{item.id} in the document has {size:,} bytes, more than maxFileBytes "
                    f"{max_bytes:,}; nothing was imported",
                    ErrorCode.FILE_TOO_LARGE,
                )
            if not item.content.strip() and item.kind not in RANGED_KINDS:
                # A file (an empty __init__.py) or a region of one may be blank; a note
                # never was (the server refuses to add one).
                raise InvalidParams(f"{field}.content", f"{item.id} is empty")
            _reroot(item, root, field)
    return document.window, document.archive


def _reroot(item: ExportItem, root: Path, field: str) -> None:
    path = item.metadata.get("path")
    item.metadata.pop("uri", None)
    if path is None:
        return
    if not isinstance(path, str) or not path:
        raise InvalidParams(f"{field}.metadata.path", f"{item.id} has a path that is not text")
    relative = PurePosixPath(path)
    outside = relative.is_absolute() or ".." in relative.parts or "\0" in path
    if not outside:
        # Lexically inside is not enough: a folder on the way may be a symlink out.
        try:
            outside = not (root / relative).resolve().is_relative_to(root)
        except (OSError, RuntimeError):
            outside = True
    if outside:
        raise ContextError(
            f"{item.id} in the document points outside the workspace ({_cut(path)}); "
            "nothing was imported",
            ErrorCode.OUTSIDE_WORKSPACE,
        )
    item.metadata["uri"] = (root / relative).as_uri()


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
