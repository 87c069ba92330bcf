"""What a new item would refresh or absorb in a window: dedup by text, and by range.

A note or an error is the same item as another of the same kind and text. A whole file
is the same as the file item of its path, and absorbs that file's regions. A region is
the same as a region of the same lines, absorbs the regions it touches or overlaps, and
is itself the file item when the whole file is already there. A view is how an item is
shown, not what it is: a file shown as its outline hides bodies, so it neither absorbs
a definition shown whole nor stands for one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final

from contextls.core.candidates import Candidate
from contextls.core.costs import Costs
from contextls.core.items import VIEW, Item, is_outlined, lines_of
from contextls.core.regions import merge_regions, touching_closure
from contextls.core.render import body_piece
from contextls.protocol import RANGED_KINDS


def duplicates(
    candidate: Candidate,
    items_for_path: Callable[[str], list[Item]],
    same_text: Callable[[str, str], Item | None],
) -> tuple[Item | None, list[Item]]:
    """The item ``candidate`` would refresh in place, and the regions it would absorb."""
    path = candidate.metadata.get("path")
    if candidate.kind not in RANGED_KINDS or not isinstance(path, str):
        return same_text(candidate.kind, candidate.content), []
    same: Item | None = None
    absorbed: list[Item] = []
    if candidate.kind == "file":
        # A file shown as its outline sits beside the definitions shown whole: it hides
        # their bodies, so it never takes their place.
        outline = candidate.metadata.get(VIEW) == "outline"
        for item in items_for_path(path):
            if item.is_whole_file:
                same = item
            elif item.is_region and not outline:
                absorbed.append(item)
        return same, absorbed
    lines = lines_of(candidate.metadata)
    if lines is None:
        return None, []
    regions = []
    for item in items_for_path(path):
        if item.is_whole_file:
            if is_outlined(item):
                continue  # the file shows no bodies: a definition of it is its own item
            return item, []
        if item.is_region:
            if item.lines == lines:
                same = item
            else:
                regions.append(item)
    return same, touching_closure(lines, regions)


VIEW_KEYS: Final = ("view", "wholeTokens")
"""An item added again shows all of itself."""


@dataclass(slots=True)
class Arrival:
    """What a candidate becomes in a window: the item (not counted, no id yet when new),
    the item it refreshes, the regions it absorbs, and every item it replaces."""

    item: Item
    same: Item | None
    absorbed: list[Item]
    leaving: list[Item]


def arriving(
    candidate: Candidate,
    items_for_path: Callable[[str], list[Item]],
    same_text: Callable[[str, str], Item | None],
    costs: Costs,
    encoding: str,
) -> Arrival:
    """The item ``candidate`` makes: a refresh of the same item, a merge of the regions
    it touches (as one of them), or a new item; a region of a file already whole in the
    window is that file."""
    same, absorbed = duplicates(candidate, items_for_path, same_text)
    content, metadata = candidate.content, dict(candidate.metadata)
    if absorbed and candidate.kind == "code":
        # An exact match among touching regions merges with them, as one of them.
        exact = [same] if same is not None and not same.is_whole_file else []
        merged = merge_regions([*absorbed, *exact], candidate)
        if merged is None:  # texts that do not line up with their ranges: keep apart
            absorbed = []
        else:
            content, metadata = merged
            absorbed = [*absorbed, *exact]
            same = None
    if same is not None and same.is_whole_file and candidate.kind == "code":
        # A region of a file that is already whole in the window adds nothing.
        content, metadata = same.content, same.metadata
    leaving = [*absorbed, same] if same is not None else absorbed
    pinned = candidate.pin or any(item.pinned for item in leaving)
    if same is not None:
        kept = {k: v for k, v in same.metadata.items() if k not in VIEW_KEYS}
        item = replace(
            same,
            content=content,
            metadata={**kept, **metadata},
            pinned=pinned,
            stale=False,
            encoding=encoding,
            label="",
            tokens=0,
        )
        if same.encoding == encoding and body_piece(same) == body_piece(item):
            item.body_tokens = costs.body(same)
    else:
        item = Item("", candidate.kind, content, metadata, 0, 0, pinned=pinned, encoding=encoding)
    return Arrival(item, same, absorbed, leaving)
