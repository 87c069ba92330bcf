"""Where a span of lines is after its file changed, or that it cannot be told.

A region whose own text changed (stale) has no text left to look for: it
follows its place instead, as an editor's highlight does. Two ways, both by
aligning lines:

- ``map_span``: the file's text before and after the change are both known
  (the server saw the file at its last look), so the lines around the span
  say where it went;
- ``place_by_content``: only the region's own text is known (after a restart,
  or when another process moved it), so its lines that are still there say
  where it is.

Either answers None rather than guess: when the lines at the span's edge
were rewritten into a different number of lines, or too few of its own are
left.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Final

Span = tuple[int, int]
"""1-based, inclusive first and last line."""

MAX_ALIGNED_LINES: Final = 20_000
"""Past this many changed lines on each side, the alignment is not tried (it grows
with their product); a span inside such a change cannot be told."""

CONTEXT_LINES: Final = 200
"""How far around its last place a region's own lines are looked for."""


def map_span(before: list[str], after: list[str], span: Span) -> Span | None:
    """Where lines ``span`` of ``before`` are in ``after``; None when it cannot be told.

    Lines inserted right above or right below the span stay outside it (as an
    editor's highlight does); lines inserted or changed inside it are part of
    it. A line changed in place (a change that keeps the number of lines) maps
    to itself; a change that straddles an edge of the span and changes the
    number of lines leaves that edge unknown.
    """
    first, last = span[0] - 1, span[1] - 1
    if not 0 <= first <= last < len(before):
        return None
    head = _common_head(before, after)
    tail = _common_tail(before, after, head)
    shift = len(after) - len(before)
    old_end, new_end = len(before) - tail, len(after) - tail
    if last < head:
        return span
    if first >= old_end:
        return span[0] + shift, span[1] + shift
    if old_end - head > MAX_ALIGNED_LINES or new_end - head > MAX_ALIGNED_LINES:
        return None
    matcher = SequenceMatcher(None, before[head:old_end], after[head:new_end], autojunk=False)
    hunks = [
        (tag, i1 + head, i2 + head, j1 + head, j2 + head)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
    ]
    start = _edge(hunks, first, first, last, head, old_end, leading=True)
    end = _edge(hunks, last, first, last, head, old_end, leading=False)
    if start is None or end is None or start > end:
        return None
    return start + 1, end + 1


def _edge(
    hunks: Sequence[tuple[str, int, int, int, int]],
    line: int,
    first: int,
    last: int,
    head: int,
    old_end: int,
    leading: bool,
) -> int | None:
    """The 0-based line of ``after`` where edge ``line`` of the span [first, last] is."""
    if line < head:
        return line
    if line >= old_end:  # in the common tail: after the middle, shifted like it
        _, _, i2, _, j2 = hunks[-1]
        return line - i2 + j2
    for tag, i1, i2, j1, j2 in hunks:
        if not i1 <= line < i2:
            continue
        if tag == "equal" or i2 - i1 == j2 - j1:
            return line - i1 + j1  # unchanged, or changed in place
        if leading and i1 == line and i2 - 1 <= last:
            return j1  # the span starts with this change: its new lines (or the next line)
        if not leading and i2 - 1 == line and i1 >= first:
            return j2 - 1  # the span ends with it: its new lines (or the line before)
        return None
    return None


def _common_head(before: list[str], after: list[str]) -> int:
    limit = min(len(before), len(after))
    head = 0
    while head < limit and before[head] == after[head]:
        head += 1
    return head


def _common_tail(before: list[str], after: list[str], head: int) -> int:
    limit = min(len(before), len(after)) - head
    tail = 0
    while tail < limit and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    return tail


def place_by_content(content: str, text: str, near: Span) -> Span | None:
    """Where a region whose text was ``content`` is in ``text`` now, looked for around its
    last place ``near``; None unless at least half of its lines are still there together.

    Its first and last lines, when they are among those, are its edges; otherwise the
    edges are taken as changed in place.
    """
    own = content.splitlines()
    if not own:
        return None
    lines = text.splitlines()
    low = max(0, near[0] - 1 - CONTEXT_LINES - len(own))
    high = min(len(lines), near[1] + CONTEXT_LINES + len(own))
    matcher = SequenceMatcher(None, own, lines[low:high], autojunk=False)
    blocks = [block for block in matcher.get_matching_blocks() if block.size]
    found = sum(block.size for block in blocks)
    if (
        not blocks
        or 2 * found < len(own)
        or not any(own[i].strip() for block in blocks for i in range(block.a, block.a + block.size))
    ):
        return None
    first, last = blocks[0], blocks[-1]
    start = low + first.b - first.a
    end = low + last.b + last.size - 1 + (len(own) - last.a - last.size)
    if start < 0 or end >= len(lines) or start > end:
        return None
    return start + 1, end + 1
