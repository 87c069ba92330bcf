"""Context items: what a person marked, with its place in the workspace."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from contextls.protocol import RANGED_KINDS, ItemKind, ItemView

StaleReason = Literal["changed", "lost", "deleted", "unreadable", "outside", "too large", "missing"]
STALE_REASON: Final = "staleReason"
"""The metadata key that says why an item is stale (its text is kept as it was)."""
STALE_NOTES: Final[dict[str, str]] = {
    "changed": "the file changed here since this was added",
    "lost": "the file changed here and around it, so where this is now is not known; "
    "this is the text it had",
    "deleted": "the file was deleted; this is the text it had",
    "unreadable": "the file cannot be read now; this is the text it had",
    "outside": "the file now leads outside the workspace; this is the text it had",
    "too large": "the file outgrew the budget; this is the text it had",
    "missing": "its definition is not in the file now (deleted or renamed); this is the "
    "text it had",
}

KIND_TITLES: Final[dict[str, str]] = {
    "code": "Code",
    "text": "Text",
    "file": "File",
    "repl-history": "REPL history",
    "error": "Error",
    "custom": "Custom",
}

_LABEL_WIDTH: Final = 60
_FIRST_LINE: Final = re.compile(r"\S[^\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]*")
"""From the first character that is not white space to the end of its line (as splitlines)."""
_LABEL_SCAN: Final = 4 * _LABEL_WIDTH
_FIRST_LINE_START: Final = re.compile(
    rf"\S[^\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]{{0,{_LABEL_SCAN - 1}}}"
)
"""``_FIRST_LINE``, read no further than a label needs."""


@dataclass(slots=True)
class Item:
    """One item of a window or of the archive.

    ``seq`` orders the window (a refreshed item gets a new, larger seq); it is
    persisted so a restart restores the exact order.
    """

    id: str
    kind: ItemKind
    content: str
    metadata: dict[str, Any]
    timestamp: int
    tokens: int
    pinned: bool = False
    stale: bool = False
    seq: int = 0
    encoding: str = ""
    label: str = field(default="", compare=False)
    body_tokens: int = field(default=-1, compare=False, repr=False, init=False)
    """What the item's text takes in a render (``core.render.body_piece``), once counted;
    -1 until then. ``tokens`` is that plus its heading: what the window counts."""
    demand: int = field(default=-1, compare=False, repr=False, init=False)
    """The signs of demanding work its text shows (``core.adaptive``), once counted;
    -1 until then (and again when its text changes)."""

    def __post_init__(self) -> None:
        if not self.label:
            self.label = make_label(self.kind, self.content, self.metadata)

    @property
    def path(self) -> str | None:
        path = self.metadata.get("path")
        return path if isinstance(path, str) else None

    @property
    def lines(self) -> tuple[int, int] | None:
        """1-based inclusive line span, when the item is a region of a file."""
        return lines_of(self.metadata)

    @property
    def is_ranged(self) -> bool:
        """Points into a file, so range dedup applies (a region or a whole file)."""
        return self.kind in RANGED_KINDS and self.path is not None

    @property
    def is_whole_file(self) -> bool:
        return self.kind == "file" and self.path is not None

    @property
    def is_region(self) -> bool:
        return self.kind == "code" and self.path is not None and self.lines is not None


def make_label(kind: str, content: str, metadata: dict[str, Any]) -> str:
    """A short human name: ``src/app.py:10-24 (main)``, ``src/app.py``, ``KeyError: 'x'``,
    the first line of a note. Listings show the kind beside the label: the label never
    repeats it (``text text: …``)."""
    path = metadata.get("path")
    if isinstance(path, str) and path:
        label = source_label(kind, path, lines_of(metadata), columns_of(content, metadata))
        symbol = metadata.get("symbol")
        if isinstance(symbol, str) and symbol:
            label = f"{label} ({symbol})"
        return label
    title = metadata.get("title")
    if isinstance(title, str) and title.strip():
        return _shorten(title.strip())
    if kind == "error":
        return _shorten(error_line(content) or "error")
    return _shorten(_first_line(content) or kind)


_TRACEBACK_HEAD: Final = "Traceback (most recent call last):"
_ERROR_LINE: Final = re.compile(
    r"^\s*(?:E\s{2,}|error(?:\[\w+\])?:|fatal:|panic:|\w*(?:Error|Exception)\b)",
    re.IGNORECASE,
)
_KIND_PREFIX: Final = re.compile(r"^error(?:\[(\w+)\])?:\s*", re.IGNORECASE)


def error_line(content: str) -> str:
    """The line that says what went wrong: a Python traceback's last exception line
    (``KeyError: 'x'``), else the first line that looks like an error message
    (``error:``, ``E   ...`` from pytest, ``...Error``), else the first line; without a
    leading ``error:``, which the item's kind already says."""
    lines = [line.strip() for line in content.splitlines() if line.strip()]
    if not lines:
        return ""
    chosen = lines[0]
    if _TRACEBACK_HEAD in content:
        after = content[content.rindex(_TRACEBACK_HEAD) :].splitlines()
        frames = [line for line in after[1:] if line.strip()]
        # The exception line is the first one after the frames that is not indented.
        for line in frames:
            if not line.startswith((" ", "\t")):
                chosen = line.strip()
                break
    else:
        chosen = next((line for line in lines if _ERROR_LINE.match(line)), lines[0])
    chosen = chosen.removeprefix("E").strip() if chosen.startswith("E  ") else chosen
    shorter = _KIND_PREFIX.sub(lambda m: f"[{m[1]}] " if m[1] else "", chosen)
    return shorter or chosen


def lines_of(metadata: dict[str, Any]) -> tuple[int, int] | None:
    """The 1-based inclusive ``startLine``/``endLine`` of item metadata, if it has both."""
    start, end = metadata.get("startLine"), metadata.get("endLine")
    if isinstance(start, int) and isinstance(end, int):
        return start, end
    return None


START_COLUMN: Final = "startColumn"
END_COLUMN: Final = "endColumn"
"""Metadata of a region inside one line: its 1-based columns (UTF-16, inclusive)."""


def columns_of(content: str, metadata: dict[str, Any]) -> tuple[int, int] | None:
    """The columns of a region inside one line while its text is still that piece: read
    again or merged, it holds whole lines, and its columns no longer say where it is."""
    start, end = metadata.get(START_COLUMN), metadata.get(END_COLUMN)
    if not isinstance(start, int) or not isinstance(end, int) or "\n" in content:
        return None
    if len(content) > end or len(content.encode("utf-16-le")) // 2 != end - start + 1:
        return None
    return start, end


def as_whole_lines(item: Item) -> None:
    """A piece of a line read again holds the whole line: its columns go, and its label
    names the line."""
    if START_COLUMN in item.metadata:
        item.metadata = {
            k: v for k, v in item.metadata.items() if k not in (START_COLUMN, END_COLUMN)
        }
        item.label = make_label(item.kind, item.content, item.metadata)


def source_label(
    kind: str, path: str, lines: tuple[int, int] | None, columns: tuple[int, int] | None = None
) -> str:
    """Where an item comes from: ``src/app.py:10-24``, ``src/app.py:7``, a piece of one line
    ``long.js:2:17-316``, or the path of a file."""
    if lines is None or kind == "file":
        return path
    start, end = lines
    if start == end and columns is not None:
        return f"{path}:{start}:{columns[0]}-{columns[1]}"
    return f"{path}:{start}" if start == end else f"{path}:{start}-{end}"


def _first_line(content: str) -> str:
    """The first line that is not blank, stripped, or as much of it as its label shows
    (read to its end, a note of 800 KB on one line costs the loop 2 ms for 60 characters)."""
    found = _FIRST_LINE_START.search(content)
    if found is None:
        return ""
    line = found.group().rstrip()
    if len(line) <= _LABEL_WIDTH and found.end() - found.start() == _LABEL_SCAN:
        # Blanks up to where the scan stopped: the label is the line's, whatever follows.
        whole = _FIRST_LINE.match(content, found.start())
        return whole.group().rstrip() if whole else line
    return line


def _shorten(text: str) -> str:
    return text if len(text) <= _LABEL_WIDTH else text[: _LABEL_WIDTH - 1] + "…"


def split_lines(content: str) -> list[str]:
    """The lines of a region's text; one trailing newline does not make an extra line."""
    lines = content.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


VIEW: Final = "view"
"""Metadata of how an item shows its source (a view is how it is shown, not what it is)."""


def view_of(item: Item) -> ItemView:
    """How the item shows its source: ``whole``, ``outline`` or ``map``."""
    view = item.metadata.get(VIEW)
    return view if view in ("outline", "map") else "whole"


def is_outlined(item: Item) -> bool:
    return item.metadata.get(VIEW) == "outline"
