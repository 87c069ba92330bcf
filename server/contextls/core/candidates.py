"""What a request asks to add, as a window ``Candidate`` with its metadata built once.

Regions and files carry ``uri``, ``path`` (relative to the workspace root),
``language`` and, for regions, 1-based ``startLine``/``endLine``; the
client's own metadata keys come first, so ours win where they clash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contextls.core.errors import InvalidParams
from contextls.core.languages import guess_language
from contextls.protocol import ItemKind

Metadata = dict[str, Any]


@dataclass(slots=True)
class Candidate:
    """What a request wants to add. ``metadata`` carries path and lines for file regions."""

    kind: ItemKind
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    pin: bool = False
    id: str | None = None
    """Set when restoring an archived item: it comes back under its own id."""
    source: str | None = None
    """The whole text of a region's file, when known: regions that merge take the file's
    text over the merged lines from it (a piece of a line never stands for the line)."""


def region(
    content: str,
    uri: str,
    path: str,
    lines: tuple[int, int],
    language: str | None = None,
    metadata: Metadata | None = None,
    pin: bool = False,
    symbol: str | None = None,
    symbol_kind: str | int | None = None,
    source: str | None = None,
) -> Candidate:
    """``source``: the file's whole text, when known (merged regions are cut from it)."""
    meta = _from_file(uri, path, language, metadata)
    meta["startLine"], meta["endLine"] = lines
    if symbol is not None:
        meta["symbol"] = symbol
        meta["symbolKind"] = symbol_kind
    return Candidate("code", content, _compact(meta), pin, source=source)


def file(
    content: str,
    uri: str,
    path: str,
    language: str | None = None,
    metadata: Metadata | None = None,
    pin: bool = False,
) -> Candidate:
    return Candidate("file", content, _compact(_from_file(uri, path, language, metadata)), pin)


def text(
    kind: ItemKind,
    content: str,
    language: str | None = None,
    metadata: Metadata | None = None,
    pin: bool = False,
) -> Candidate:
    if not content.strip():
        raise InvalidParams("$.content", "the content is empty")
    meta = dict(metadata or {})
    if language:
        meta["language"] = language
    return Candidate(kind, content, meta, pin)


def _from_file(uri: str, path: str, language: str | None, metadata: Metadata | None) -> Metadata:
    """The client's metadata, then ours (which win): where the text comes from."""
    return {
        **(metadata or {}),
        "uri": uri,
        "path": path,
        "language": _language(language, metadata, path),
    }


def _language(language: str | None, metadata: Metadata | None, path: str) -> str | None:
    given = (metadata or {}).get("language")
    return language or (given if isinstance(given, str) and given else None) or guess_language(path)


def _compact(metadata: Metadata) -> Metadata:
    return {key: value for key, value in metadata.items() if value is not None}
