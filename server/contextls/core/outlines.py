"""An item shown as its outline: a whole file, or a container found by name (a class),
without the bodies of what it defines. Pure: the outline is made from the item's own
text, so the window can shrink an item before it would evict it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from contextls.core.items import Item, is_outlined
from contextls.core.window import Window
from contextls.structure.languages import Unsupported, language_of
from contextls.structure.model import CONTAINERS
from contextls.structure.outline import outline
from contextls.structure.symbols import symbols

"""Metadata: ``outline`` when an item shows its outline (absent: it shows all of it)."""
WHOLE_TOKENS: Final = "wholeTokens"
"""Metadata of an outlined item: the tokens it took whole (what ``expand`` brings back)."""


def can_outline(item: Item) -> bool:
    """A whole file, or a container (class, struct…) added by its name."""
    if item.is_whole_file:
        return True
    kind = item.metadata.get("symbolKind")
    return item.kind == "code" and isinstance(kind, str) and kind.lower() in CONTAINERS


def outline_text(text: str, item: Item) -> str | None:
    """``text`` (the item's source: its file, or its definition) as an outline; None when
    its language is not parsed here or nothing would be hidden."""
    given = item.metadata.get("language")
    language = language_of(item.path or "", given if isinstance(given, str) else None)
    if language is None:
        return None
    try:
        found = symbols(text, language)
    except Unsupported:
        return None
    shown = outline(text, found)
    return shown if shown != text else None


def outline_source(text: str, kind: str, metadata: dict[str, object]) -> str | None:
    """``outline_text`` of a source not yet an item (a worker process's job: plain
    arguments in, text out)."""
    return outline_text(text, Item("", kind, text, metadata, 0, 0))  # type: ignore[arg-type]


def outline_of(item: Item) -> str | None:
    """The outline an item shown whole would shrink to (None: it cannot shrink)."""
    if is_outlined(item) or not can_outline(item):
        return None
    return outline_text(item.content, item)


def outlined_if(compaction: str, item: Item) -> str | None:
    """With ``compaction: outline``, what the window may show an item as to make room."""
    return outline_of(item) if compaction == "outline" else None


def take_outlined(window: Window, save: Callable[[Item], None]) -> list[str]:
    """What to tell every client of the items the window showed as their outlines to make
    room since it was last asked; each is ``save``d (one gone since is not told of)."""
    said = []
    for item in window.outlined:
        save(item)
        if item.id in window:
            whole = item.metadata.get(WHOLE_TOKENS, 0)
            said.append(
                f"{item.id} {item.label} shown as outline: {whole:,} → {item.tokens:,} tokens; "
                f"`contextls expand {item.id}` shows it whole"
            )
    window.outlined.clear()
    return said
