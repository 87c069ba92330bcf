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

from contextls.core.candidates import Candidate
from contextls.core.items import VIEW, Item, is_outlined, lines_of
from contextls.core.regions import touching_closure
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
