"""A stale region follows its place, and says when that place cannot be told.

The scenario people met: lines 30-34 of the standard library's json/decoder.py
are marked, line 32 is edited (the region is stale), a line is inserted at 21;
the region must now cover 31-35, so re-reading it takes what the person marked.
"""

from __future__ import annotations

import json
from pathlib import Path

from contextls.core.follow import Seen, follow, lines_of_text
from contextls.core.follow_lines import map_span, place_by_content
from contextls.core.items import Item

DECODER = Path(json.__file__).with_name("decoder.py").read_text()


def region(text: str, start: int, end: int, stale: bool = False, why: str = "") -> Item:
    content = "".join(text.splitlines(keepends=True)[start - 1 : end])
    metadata: dict[str, object] = {"path": "json/decoder.py", "startLine": start, "endLine": end}
    if why:
        metadata["staleReason"] = why
    return Item("ctx-1", "code", content, metadata, 0, 10, stale=stale)


def edit_line(text: str, line: int, new: str) -> str:
    lines = text.splitlines(keepends=True)
    lines[line - 1] = new
    return "".join(lines)


def insert_line(text: str, line: int, new: str) -> str:
    lines = text.splitlines(keepends=True)
    lines.insert(line - 1, new)
    return "".join(lines)


def test_the_decoder_scenario_follows_the_place_of_a_stale_region() -> None:
    item = region(DECODER, 30, 34)
    edited = edit_line(DECODER, 32, "    # edited by hand\n")
    (change,) = follow([item], edited, seen=Seen(lines_of_text(DECODER), {"ctx-1": (30, 34)}))
    assert (change.stale, change.why, change.lines) == (True, "changed", None)

    stale = region(DECODER, 30, 34, stale=True, why="changed")
    stale.content = item.content  # it keeps what it had
    moved = insert_line(edited, 21, "# a line above\n")
    seen = Seen(lines_of_text(edited), {"ctx-1": (30, 34)})
    (change,) = follow([stale], moved, seen=seen)
    assert (change.stale, change.why, change.lines) == (True, "changed", (31, 35))
    assert moved.splitlines()[30:35] == edited.splitlines()[29:34]


def test_without_the_text_before_a_stale_region_is_placed_by_its_own_lines() -> None:
    # After a restart, or when the file changed twice between two looks.
    item = region(DECODER, 30, 34)
    both = insert_line(edit_line(DECODER, 32, "    # edited by hand\n"), 21, "# above\n")
    (change,) = follow([item], both)
    assert (change.why, change.lines) == ("changed", (31, 35))


def test_lines_inserted_inside_grow_the_region_and_outside_do_not() -> None:
    before = [f"line {n}" for n in range(1, 21)]
    after = [*before[:9], "new inside", *before[9:]]  # between lines 9 and 10
    assert map_span(before, after, (8, 12)) == (8, 13)
    assert map_span(before, after, (10, 12)) == (11, 13)  # right above: outside
    assert map_span(before, after, (5, 9)) == (5, 9)  # right below: outside
    assert map_span(before, after, (15, 15)) == (16, 16)


def test_an_edge_rewritten_into_more_lines_cannot_be_told() -> None:
    before = [f"line {n}" for n in range(1, 21)]
    # Lines 8-11 become three other lines: where does a region of 10-14 start now?
    after = [*before[:7], "x", "y", "z", *before[11:]]
    assert map_span(before, after, (10, 14)) is None
    # Rewritten in place (as many lines), each line keeps its place.
    same = [*before[:7], "w", "x", "y", "z", *before[11:]]
    assert map_span(before, same, (10, 14)) == (10, 14)
    # A change wholly inside the region is part of it.
    assert map_span(before, after, (6, 14)) == (6, 13)


def test_a_region_deleted_whole_cannot_be_told() -> None:
    before = [f"line {n}" for n in range(1, 11)]
    assert map_span(before, before[:3] + before[6:], (4, 6)) is None
    assert map_span(before, before[:3] + before[5:], (4, 6)) == (4, 4)


def test_too_few_of_its_own_lines_left_cannot_be_told() -> None:
    text = "".join(f"line {n}\n" for n in range(1, 41))
    content = "line 10\nline 11\nline 12\nline 13\n"
    rewritten = text.replace("line 10\nline 11\nline 12\n", "a\nb\nc\n")
    assert place_by_content(content, rewritten, (10, 13)) is None
    assert place_by_content(content, text.replace("line 11\n", "eleven\n"), (10, 13)) == (10, 13)


def test_a_lost_region_stays_lost_until_its_text_is_back() -> None:
    before = DECODER
    item = region(before, 30, 34)
    after = before.replace("".join(before.splitlines(keepends=True)[27:36]), "gone\n")
    (change,) = follow([item], after, seen=Seen(lines_of_text(before), {"ctx-1": (30, 34)}))
    assert (change.stale, change.why) == (True, "lost")
    lost = region(before, 30, 34, stale=True, why="lost")
    assert follow([lost], insert_line(after, 1, "# more\n"), seen=None) == []
    (back,) = follow([lost], before)
    assert (back.stale, back.why) == (False, None)


def test_a_span_recorded_for_other_lines_is_not_mapped() -> None:
    # Another process moved the region since this one looked: its own lines decide.
    text = "".join(f"line {n}\n" for n in range(1, 41))
    stale = region(text, 10, 12, stale=True, why="changed")
    stale.content = "line 10\nline 11 as added\nline 12\n"
    seen = Seen(lines_of_text(text), {"ctx-1": (2, 4)})
    moved = insert_line(text, 1, "# above\n")
    (change,) = follow([stale], moved, seen=seen)
    assert change.lines == (11, 13)
