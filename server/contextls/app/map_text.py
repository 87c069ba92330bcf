"""What a map says: the best definitions drawn, fitted to the map's share of the window,
and its last lines, saying which of the workspace's files it leaves out and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from contextls.app import code_index
from contextls.app.map_messages import MapRequest
from contextls.core.costs import Costs
from contextls.core.errors import ContextError
from contextls.core.items import Item
from contextls.protocol import ErrorCode
from contextls.structure.repomap import GAP, Shown, fit, rank, shown
from contextls.structure.tags import FileFacts
from contextls.structure.uses import Uses


def ranked(files: Mapping[str, FileFacts], request: MapRequest, known: list[Uses]) -> list[Shown]:
    """The ``request.share`` best definitions of ``files``, drawn (pure). ``known``: the
    workspace's uses, brought up to date here."""
    if not files:
        raise ContextError(
            "the workspace holds no file whose structure contextls knows (Python, "
            "JavaScript, TypeScript, Go, Rust, Java, C, C++, Emacs Lisp): no map to make",
            ErrorCode.NO_STRUCTURE,
        )
    best = rank(
        files,
        request.focus_files,
        request.focus_names,
        request.query,
        request.leave_out,
        known=known,
        limit=request.share,  # no more definitions fit (a line of at least one token each)
    )
    return shown(best, files)


def fitted(
    entries: list[Shown], costs: Costs, shape: Item, share: int, tail: str = ""
) -> tuple[str, int]:
    """The map's text (``tail`` last) and how many definitions it shows: the share holds
    what the item (``shape``, the map's item with another text) takes in the window, its
    heading and fences too."""

    def cost(text: str) -> int:
        return costs.of(replace(shape, content=text))  # counted afresh: a new text

    text, count = fit(entries, cost, share, tail)
    return text or "(no definition fits the map's share)\n", count


def unmapped_note(unmapped: int, mapped: int) -> str:
    """The map's last line when files were left out of it (else nothing)."""
    if not unmapped:
        return ""
    return (
        f"{GAP} {unmapped:,} of the workspace's {unmapped + mapped:,} files are not mapped: "
        f"a map holds the {code_index.mapped_megabytes():g} MB of code changed most recently\n"
    )


def unread_note(unread: Mapping[str, str]) -> str:
    """The map's last line when files could not be read for it (else nothing): how many,
    and by reason the first of them."""
    if not unread:
        return ""
    by_why: dict[str, list[str]] = {}
    for rel in sorted(unread):
        by_why.setdefault(unread[rel], []).append(rel)
    said = "; ".join(
        f"{why}: {rels[0]}" + (f" and {len(rels) - 1:,} more" if len(rels) > 1 else "")
        for why, rels in sorted(by_why.items(), key=lambda entry: -len(entry[1]))
    )
    files = "file" if len(unread) == 1 else "files"
    return f"{GAP} {len(unread):,} {files} could not be read for the map ({said})\n"
