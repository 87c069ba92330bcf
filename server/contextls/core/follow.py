"""Items that follow their files: what changes when a file's text changes.

A whole-file item takes the file's current text. A region keeps its own text
and follows it: when lines come or go above it, its line span moves to where
that text is now (the occurrence nearest its old place). When its own text
changed it is stale: it keeps the text it had and goes on following its
place, as an editor's highlight does (``follow_lines``), so that
``contextls/refresh`` reads the lines it covers now; when that place cannot
be told, it is stale as ``lost`` and refresh asks instead of guessing. When
its file is gone it is stale too. Pure: the caller reads the file (the
editor's buffer, else the disk) and applies the result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from contextls.core.follow_lines import Span, map_span, place_by_content
from contextls.core.items import STALE_REASON, Item, StaleReason, is_outlined
from contextls.core.outlines import outline_text
from contextls.core.text import lines_with_ends
from contextls.structure.languages import Unsupported, language_of
from contextls.structure.model import Symbol
from contextls.structure.outline import outline
from contextls.structure.resolve import resolve
from contextls.structure.symbols import parsed as symbols_parsed

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


@dataclass(frozen=True, slots=True)
class Seen:
    """A file's lines as last followed, and the spans its regions had in them."""

    lines: list[str]
    spans: Mapping[str, Span] = field(default_factory=dict)


def lines_of_text(text: str) -> list[str]:
    """The lines of ``text`` as LSP numbers them, without their ends."""
    return [line.rstrip("\r\n") for line in lines_with_ends(text)]


def follow(
    items: Iterable[Item],
    text: str | None,
    gone: StaleReason = "deleted",
    seen: Seen | None = None,
    lines: list[str] | None = None,
) -> list[Follow]:
    """The changes ``text`` makes to these items; None: the file is ``gone`` (deleted,
    unreadable, or it now leads outside the workspace). ``seen``: the file as it was
    last followed, which tells where a stale region's place went; ``lines``: those of
    ``text`` (``lines_of_text``), when the caller has them."""
    changes: list[Follow] = []
    parsed: dict[str, tuple[list[Symbol], bool] | None] = {}
    for item in items:
        known = _definitions(item, text, parsed) if text is not None else None
        if known is not None:
            assert text is not None
            change = follow_symbol(item, text, *known)
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
                if lines is None:
                    lines = lines_of_text(text)
                changes.extend(_follow_place(item, span, text, lines, seen))
            elif start != span[0]:
                changes.append(
                    Follow(item.id, stale=False, lines=(start, start + span[1] - span[0]))
                )
            elif item.stale:
                changes.append(Follow(item.id, stale=False))
    return changes


def _follow_place(
    item: Item, span: Span, text: str, lines: list[str], seen: Seen | None
) -> list[Follow]:
    """A region whose own text is not in the file: where its place went, or ``lost``."""
    why = item.metadata.get(STALE_REASON) if item.stale else None
    if why == "lost":
        return []  # once its place is unknown, no later change can tell it again
    if seen is not None and seen.spans.get(item.id) == span:
        place = map_span(seen.lines, lines, span)
    else:
        place = place_by_content(item.content, text, span)
    if place is None:
        return [Follow(item.id, stale=True, why="lost")]
    moved = place if place != span else None
    if why == "changed" and moved is None:
        return []
    return [Follow(item.id, stale=True, lines=moved, why="changed")]


QUALIFIED_NAME: Final = "qualifiedName"
"""Metadata of an item the server found by a definition's name: it follows the name."""


def _definitions(
    item: Item, text: str, parsed: dict[str, tuple[list[Symbol], bool] | None]
) -> tuple[list[Symbol], bool] | None:
    """The definitions of ``text``, and whether it parsed cleanly, when ``item`` follows
    one by name and the file's language is parsed here; None: follow its text instead."""
    if not isinstance(item.metadata.get(QUALIFIED_NAME), str) or item.is_whole_file:
        return None
    given = item.metadata.get("language")
    language = language_of(item.path or "", given if isinstance(given, str) else None)
    if language is None:
        return None
    if language not in parsed:
        try:
            parsed[language] = symbols_parsed(text, language)
        except Unsupported:
            parsed[language] = None
    return parsed[language]


def follow_symbol(
    item: Item, text: str, found: list[Symbol], clean: bool = True
) -> Follow | None:
    """A symbol found again by its name: moved code moves the item, a changed body
    makes it stale (at its new place), a name no longer defined makes it stale too, but
    only when the file parses (``clean``): a half-typed line above a definition can hide
    it from the parser while the person types, and the item waits for a clean parse."""
    name = item.metadata[QUALIFIED_NAME]
    hits = [s for s in resolve(found, name) if s.display == name]
    if len(hits) != 1:
        if not clean or (item.stale and item.metadata.get(STALE_REASON) == "missing"):
            return None
        return Follow(item.id, stale=True, why="missing")
    symbol = hits[0]
    moved = symbol.lines if symbol.lines != item.lines else None
    if not clean:  # what the parser made of text that does not parse: only a plain move
        lines = text.split("\n")[symbol.start_line - 1 : symbol.end_line]
        piece = "\n".join(lines) + ("\n" if item.content.endswith("\n") else "")
        if moved and piece == item.content and item.metadata.get("view") != "outline":
            return Follow(item.id, stale=item.stale, lines=moved)
        return None
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
