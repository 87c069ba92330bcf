"""Items that follow their files: what changes when a file's text changes.

A whole-file item takes the file's current text. A region keeps its own text
and follows it: when lines come or go above it, its line span moves to where
that text is now (the occurrence nearest its old place); when its own text
changed, or its file is gone, it is stale (it keeps the text it had, and
``contextls/refresh`` reads the current range). Pure: the caller reads the
file (the editor's buffer, else the disk) and applies the result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from contextls.core.items import STALE_REASON, Item, StaleReason
from contextls.core.outlines import is_outlined, outline_text
from contextls.structure.languages import Unsupported, language_of
from contextls.structure.model import Symbol
from contextls.structure.outline import outline
from contextls.structure.resolve import resolve
from contextls.structure.symbols import symbols

MAX_OCCURRENCES: Final = 1000
"""How many places of a region's text are weighed before the nearest is taken."""


@dataclass(frozen=True, slots=True)
class Follow:
    """What happens to one item."""

    item_id: str
    stale: bool
    lines: tuple[int, int] | None = None
    """A region's new 1-based span (it moved)."""
    content: str | None = None
    """A whole file's new text."""
    why: StaleReason | None = None
    """Why it went stale (``stale``)."""


def follow(items: Iterable[Item], text: str | None, gone: StaleReason = "deleted") -> list[Follow]:
    """The changes ``text`` makes to these items; None: the file is ``gone`` (deleted,
    unreadable, or it now leads outside the workspace)."""
    changes: list[Follow] = []
    parsed: dict[str, list[Symbol] | None] = {}
    for item in items:
        found = _definitions(item, text, parsed) if text is not None else None
        if found is not None:
            assert text is not None
            change = follow_symbol(item, text, found)
            if change is not None:
                changes.append(change)
        elif text is None:
            if not item.stale or item.metadata.get(STALE_REASON) != gone:
                changes.append(Follow(item.id, stale=True, why=gone))
        elif item.is_whole_file:
            shown = (outline_text(text, item) or text) if is_outlined(item) else text
            if item.content != shown:
                changes.append(Follow(item.id, stale=False, content=shown))
            elif item.stale:
                changes.append(Follow(item.id, stale=False))
        elif (span := item.lines) is not None:
            start = locate(text, item.content, span[0])
            if start is None:
                if not item.stale or item.metadata.get(STALE_REASON) != "changed":
                    changes.append(Follow(item.id, stale=True, why="changed"))
            elif start != span[0]:
                changes.append(
                    Follow(item.id, stale=False, lines=(start, start + span[1] - span[0]))
                )
            elif item.stale:
                changes.append(Follow(item.id, stale=False))
    return changes


QUALIFIED_NAME: Final = "qualifiedName"
"""Metadata of an item the server found by a definition's name: it follows the name."""


def _definitions(
    item: Item, text: str, parsed: dict[str, list[Symbol] | None]
) -> list[Symbol] | None:
    """The definitions of ``text`` when ``item`` follows one by name and the file's
    language is parsed here; None: follow its text instead."""
    if not isinstance(item.metadata.get(QUALIFIED_NAME), str) or item.is_whole_file:
        return None
    given = item.metadata.get("language")
    language = language_of(item.path or "", given if isinstance(given, str) else None)
    if language is None:
        return None
    if language not in parsed:
        try:
            parsed[language] = symbols(text, language)
        except Unsupported:
            parsed[language] = None
    return parsed[language]


def follow_symbol(item: Item, text: str, found: list[Symbol]) -> Follow | None:
    """A symbol found again by its name: moved code moves the item, a changed body
    makes it stale (at its new place), a name no longer defined makes it stale too."""
    name = item.metadata[QUALIFIED_NAME]
    hits = [s for s in resolve(found, name) if s.display == name]
    if len(hits) != 1:
        if item.stale and item.metadata.get(STALE_REASON) == "missing":
            return None
        return Follow(item.id, stale=True, why="missing")
    symbol = hits[0]
    moved = symbol.lines if symbol.lines != item.lines else None
    if item.metadata.get("view") == "outline":
        shown = outline(text, found, symbol.lines)
        if shown != item.content or moved or item.stale:
            return Follow(item.id, stale=False, lines=moved, content=shown)
        return None
    lines = text.split("\n")[symbol.start_line - 1 : symbol.end_line]
    piece = "\n".join(lines) + ("\n" if item.content.endswith("\n") else "")
    if piece != item.content:
        if item.stale and item.metadata.get(STALE_REASON) == "changed" and not moved:
            return None
        return Follow(item.id, stale=True, lines=moved, why="changed")
    if moved or item.stale:
        return Follow(item.id, stale=False, lines=moved)
    return None


def locate(text: str, content: str, near_line: int) -> int | None:
    """The 1-based line where ``content`` starts in ``text``, nearest ``near_line``; or None."""
    if not content:
        return None
    best: int | None = None
    line, counted_to = 1, 0
    at = text.find(content)
    for _ in range(MAX_OCCURRENCES):
        if at < 0:
            break
        line += text.count("\n", counted_to, at)
        counted_to = at
        if best is None or abs(line - near_line) < abs(best - near_line):
            best = line
        if line >= near_line:
            break  # later places are only further away
        at = text.find(content, at + 1)
    return best
