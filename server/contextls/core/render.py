"""Render a window (and, on request, relevant archived items) for an LLM.

Markdown follows the seed's shape, fixed where it fell short: every item has a
``### Kind (from path:start-end)`` heading and a fence tagged with its real
language, and the fence is longer than any backtick run inside the content so
code that itself contains fences cannot break out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from contextls.core.items import KIND_TITLES, STALE_NOTES, STALE_REASON, Item, source_label
from contextls.core.languages import guess_language
from contextls.protocol import RenderFormat

_BACKTICK_RUN = re.compile(r"`{3,}")
# XML 1.0 forbids most control characters even as references (ANSI colours in
# REPL output are the usual ones); they are shown as U+FFFD instead.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(slots=True)
class Rendered:
    text: str
    tokens: int
    item_ids: list[str]
    omitted_ids: list[str]
    history_ids: list[str]
    warnings: list[str]
    history_omitted: list[tuple[str, str]] = field(default_factory=list)
    """Relevant archived items left out, with why (``over budget: …``)."""
    boundaries: list[tuple[str, str]] = field(default_factory=list)
    """(``pinned``/``settled``/``end``, the text before it): where the parts that change
    least end, for a prompt cache's breakpoints."""


def select(items: Sequence[Item], kinds: Iterable[str] | None, limit: int | None) -> list[Item]:
    """Items of the given kinds, the most recent ``limit`` of them, in window order."""
    wanted = set(kinds) if kinds else None
    chosen = [item for item in items if wanted is None or item.kind in wanted]
    if limit is not None:
        chosen = chosen[-limit:] if limit > 0 else []
    return chosen


def render(
    items: Sequence[Item],
    fmt: RenderFormat,
    count_tokens: Callable[[str], int],
    max_tokens: int | None = None,
    history: Sequence[Item] = (),
    budget: int | None = None,
    count_pieces: Callable[[Sequence[str]], int] | None = None,
) -> Rendered:
    """Render ``items`` (then ``history``) within a limit: ``max_tokens`` when given,
    else ``budget`` (the window's own token budget), in the tokens of the text returned,
    headings, fences and labels included.

    The window counts each item as its markdown section, so a markdown render of the
    whole window fits its budget by construction. Other formats frame items more
    heavily; what does not fit is left out and said (``omitted_ids``, ``warnings``):
    pinned items first (the newest of them when they do not all fit), then the most
    recent unpinned ones. ``history`` only fills what the window's items leave; an item
    of it that does not fit is listed in ``history_omitted`` with why, and a smaller
    one further down still gets its chance.

    ``tokens`` is the exact count of the returned text: the text is counted once more
    at the end and trimmed if the seams between pieces cost a token more than their
    parts. The text is made of pieces cut where tiktoken's pre-tokenizer splits anyway
    (before each section), so ``count_pieces`` (``Tokenizer.count_pieces``) counts only
    the pieces it has not seen; without it the joined text is counted.
    """
    if count_pieces is None:
        count_pieces = lambda pieces: count_tokens("".join(pieces))  # noqa: E731
    pieces_of = _FORMATTERS[fmt]
    limit = max_tokens if max_tokens is not None else budget
    kept = list(items)
    warnings: list[str] = []
    room: int | None = None
    if limit is not None:
        kept, room = _fit(kept, fmt, count_pieces, limit)
        _say_what_was_left_out(items, kept, fmt, max_tokens, limit, count_pieces, warnings)
    kept_history, history_omitted = _fit_history(history, fmt, count_tokens, count_pieces, room)
    while True:
        pieces = pieces_of(kept, kept_history)
        text = "".join(pieces)
        tokens = count_pieces(pieces)
        if limit is None or tokens <= limit:
            break
        if not (kept or kept_history):
            text, tokens = "", 0  # not even the empty frame fits such a budget
            break
        if kept_history:
            dropped = kept_history.pop()
            history_omitted.append((dropped.id, "over budget once rendered with the rest"))
        else:
            unpinned = next((item for item in kept if not item.pinned), None)
            kept.remove(unpinned if unpinned is not None else kept[0])
    kept_ids = {item.id for item in kept}
    return Rendered(
        text=text,
        tokens=tokens,
        item_ids=[item.id for item in kept],
        omitted_ids=[item.id for item in items if item.id not in kept_ids],
        history_ids=[item.id for item in kept_history],
        warnings=warnings,
        history_omitted=history_omitted,
        boundaries=_boundaries(fmt, kept, pieces, text) if kept else [],
    )


_PIECES_PER_ITEM: Final = {"markdown": 2, "xml": 1, "json": 1}


def _boundaries(
    fmt: RenderFormat, kept: Sequence[Item], pieces: Sequence[str], text: str
) -> list[tuple[str, str]]:
    """The text before each breakpoint: after the pinned items the render starts with,
    before its newest item, at its end (each only where it is a part of its own)."""
    per_item = _PIECES_PER_ITEM[fmt]  # after the frame's first piece
    pinned = next((n for n, item in enumerate(kept) if not item.pinned), len(kept))
    found = [("pinned", "".join(pieces[: 1 + per_item * pinned]))] if 0 < pinned < len(kept) else []
    newest = max(range(len(kept)), key=lambda n: kept[n].seq)
    if newest == len(kept) - 1 and len(kept) - 1 > max(pinned, 0) and len(kept) > 1:
        found.append(("settled", "".join(pieces[: 1 + per_item * (len(kept) - 1)])))
    return [*found, ("end", text)]


def section_cost(
    item: Item, fmt: RenderFormat, count_pieces: Callable[[Sequence[str]], int]
) -> int:
    """Tokens ``item`` takes in a render in ``fmt`` (in markdown: what the window counts)."""
    if fmt == "markdown":
        return count_pieces((heading_piece(item), body_piece(item)))
    return count_pieces((_SECTION[fmt](item),))


def _say_what_was_left_out(
    items: Sequence[Item],
    kept: list[Item],
    fmt: RenderFormat,
    max_tokens: int | None,
    limit: int,
    count_pieces: Callable[[Sequence[str]], int],
    warnings: list[str],
) -> None:
    pinned = [item for item in items if item.pinned]
    left_out = [item for item in pinned if item not in kept]
    if left_out:
        need = sum(section_cost(item, fmt, count_pieces) for item in pinned)
        warnings.append(
            f"the pinned items alone need {need:,} tokens in {fmt}, more than the "
            f"{limit:,} of the budget; {len(left_out)} of them "
            f"({', '.join(item.id for item in left_out)}) "
            f"{'was' if len(left_out) == 1 else 'were'} left out"
        )
    omitted = [item for item in items if item not in kept and not item.pinned]
    if omitted and max_tokens is None:
        warnings.append(
            f"{fmt} frames items more heavily than the markdown the window counts them in: "
            f"{len(omitted)} of its items ({', '.join(item.id for item in omitted[:10])}"
            f"{', …' if len(omitted) > 10 else ''}) {'was' if len(omitted) == 1 else 'were'} "
            "left out to stay within the "
            f"{limit:,}-token budget (markdown shows them all)"
        )


def _fit_history(
    history: Sequence[Item],
    fmt: RenderFormat,
    count_tokens: Callable[[str], int],
    count_pieces: Callable[[Sequence[str]], int],
    room: int | None,
) -> tuple[list[Item], list[tuple[str, str]]]:
    """The history items that fit in ``room`` (best first; None: all of them)."""
    if room is None:
        return list(history), []
    kept: list[Item] = []
    omitted: list[tuple[str, str]] = []
    room -= count_tokens(_history_heading(fmt)) if history else 0
    for item in history:
        cost = section_cost(item, fmt, count_pieces)
        if cost > room:
            omitted.append((item.id, f"over budget: {cost:,} tokens, {max(room, 0):,} left"))
            continue
        room -= cost
        kept.append(item)
    return kept, omitted


def _fit(
    items: list[Item],
    fmt: RenderFormat,
    count_pieces: Callable[[Sequence[str]], int],
    limit: int,
) -> tuple[list[Item], int]:
    """The window items that fit in ``limit``, and the tokens they leave."""
    budget = limit - count_pieces(_FORMATTERS[fmt]([], []))
    chosen: set[str] = set()
    # Pinned items first (the newest of them if they do not all fit), then the
    # most recent unpinned ones that fit.
    for wanted_pinned in (True, False):
        for item in reversed(items):
            if item.pinned != wanted_pinned:
                continue
            cost = section_cost(item, fmt, count_pieces)
            if cost > budget:
                if wanted_pinned:
                    continue  # an older pinned item may still fit
                break
            budget -= cost
            chosen.add(item.id)
    return [item for item in items if item.id in chosen], budget


# ----------------------------------------------------------------- markdown


def heading(item: Item) -> str:
    title = KIND_TITLES.get(item.kind, item.kind.title())
    meta = item.metadata
    symbol = meta.get("symbol")
    if isinstance(symbol, str) and symbol:
        title = f"{title}: {symbol}"
    elif item.kind == "custom" and isinstance(meta.get("title"), str):
        title = f"{title}: {meta['title']}"
    source = _source(item)
    heading = f"### {title} (from {source})" if source else f"### {title}"
    # The id lets an agent act on what it reads (pin, remove, refresh). Nothing in it
    # flips while the item stays as it is (a pin is said by status and list, not here),
    # so pinning changes no byte of a render a prompt cache keeps.
    heading += f" · {item.id}" + _view_note(item)
    return f"{heading} {stale_note(item)}" if item.stale else heading


def _view_note(item: Item) -> str:
    """An outline or a map says so: its bodies are left out, not missing."""
    view = item.metadata.get("view")
    return f" · {view} (no bodies)" if view in ("outline", "map") else ""


def stale_note(item: Item) -> str:
    """Said of a stale item, so the LLM does not take old text for the file's."""
    why = item.metadata.get(STALE_REASON)
    note = STALE_NOTES.get(why, "") if isinstance(why, str) else ""
    return f"[stale: {note or STALE_NOTES['changed']}]"


def _source(item: Item) -> str | None:
    path = item.path
    return source_label(item.kind, path, item.lines) if path else None


def fence_for(content: str) -> str:
    if "```" not in content:  # most content; a substring search is ~10x the regex's speed
        return "```"
    longest = max((len(run) for run in _BACKTICK_RUN.findall(content)), default=2)
    return "`" * (longest + 1)


def language_of(item: Item) -> str:
    language = item.metadata.get("language")
    if isinstance(language, str) and language:
        return language
    return guess_language(item.path) or ("text" if item.kind == "text" else "")


MARKDOWN_FRAME: Final = "## Context\n\n"
"""What a markdown render holds besides its items (the window counts it too)."""


def heading_piece(item: Item) -> str:
    """The first piece of an item's markdown section: its heading line."""
    return f"{heading(item)}\n"


def body_piece(item: Item) -> str:
    """The rest of an item's markdown section: its fenced text and the blank line after.
    It starts a line with a backtick and ends after punctuation and newlines, so the
    pre-tokenizer splits at both of its ends and its count adds up with its neighbours'."""
    fence = fence_for(item.content)
    body = item.content if item.content.endswith("\n") else item.content + "\n"
    return f"{fence}{language_of(item)}\n{body}{fence}\n\n"


def _markdown_section(item: Item) -> str:
    return heading_piece(item) + body_piece(item)


def _markdown(items: Sequence[Item], history: Sequence[Item]) -> list[str]:
    # Every piece starts a line with "#" or "`": seams the pre-tokenizer keeps, so the
    # render's count is the sum of its pieces' (what the window counts an item at).
    pieces = [MARKDOWN_FRAME]
    for item in items:
        pieces += (heading_piece(item), body_piece(item))
    if history:
        pieces.append(_history_heading("markdown"))
        for item in history:
            pieces += (heading_piece(item), body_piece(item))
    return pieces


# ---------------------------------------------------------------------- xml


def _xml_section(item: Item) -> str:
    # Imported here: xml.sax.saxutils brings urllib.request and http.client, ~25 ms of
    # every server's start (and of a person's first command) otherwise.
    from xml.sax.saxutils import escape, quoteattr

    attrs = [f"id={quoteattr(item.id)}", f"kind={quoteattr(item.kind)}"]
    source = _source(item)
    if source:
        attrs.append(f"source={quoteattr(source)}")
    language = language_of(item)
    if language:
        attrs.append(f"language={quoteattr(language)}")
    if item.pinned:
        attrs.append('pinned="true"')
    if item.stale:
        attrs.append('stale="true"')
    if item.metadata.get("view") in ("outline", "map"):
        attrs.append(f"view={quoteattr(item.metadata['view'])}")
    content = _NOT_XML.sub("\ufffd", item.content)
    return f"<item {' '.join(attrs)}>\n{escape(content)}\n</item>\n"


def _xml(items: Sequence[Item], history: Sequence[Item]) -> list[str]:
    # Each piece starts a line with "<": a seam the pre-tokenizer keeps.
    parts = ["<context>\n", *(_xml_section(item) for item in items)]
    if history:
        parts.append("<history>\n")
        parts.extend(_xml_section(item) for item in history)
        parts.append("</history>\n")
    parts.append("</context>\n")
    return parts


# --------------------------------------------------------------------- json


def _json_entry(item: Item) -> dict[str, Any]:
    return {
        "id": item.id,
        "kind": item.kind,
        "label": item.label,
        "source": _source(item),
        "language": language_of(item) or None,
        "pinned": item.pinned,
        "stale": item.stale,
        "view": item.metadata.get("view", "whole"),
        "content": item.content,
    }


def _json_section(item: Item) -> str:
    return msgspec.json.encode(_json_entry(item)).decode()


_JSON_ENTRY = "\n    {"
"""Where an entry of either list starts (strings inside are escaped: no raw newline)."""


def _json(items: Sequence[Item], history: Sequence[Item]) -> list[str]:
    document = {
        "context": [_json_entry(item) for item in items],
        "history": [_json_entry(item) for item in history],
    }
    text = msgspec.json.format(msgspec.json.encode(document).decode(), indent=2) + "\n"
    # Cut after the newline that ends "[" or "},": the pre-tokenizer ends a piece
    # of punctuation there (it runs on over newlines, never over the indent).
    first, *entries = text.split(_JSON_ENTRY)
    pieces = [first, *("    {" + entry for entry in entries)]
    return [piece + "\n" for piece in pieces[:-1]] + [pieces[-1]]


def _history_heading(fmt: RenderFormat) -> str:
    return {"markdown": "## Relevant history\n\n", "xml": "<history>\n</history>\n", "json": ""}[
        fmt
    ]


_FORMATTERS: dict[str, Callable[[Sequence[Item], Sequence[Item]], list[str]]] = {
    "markdown": _markdown,
    "xml": _xml,
    "json": _json,
}
_SECTION: dict[str, Callable[[Item], str]] = {
    "markdown": _markdown_section,
    "xml": _xml_section,
    "json": _json_section,
}
