"""Regions that merge hold the file's text over the merged lines, whatever pieces were marked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from contextls.protocol import AddResult

from .conftest import Session


def at(line: int, character: int) -> dict[str, int]:
    return {"line": line, "character": character}


async def add(session: Session, uri: str, start: dict[str, int], end: dict[str, int]) -> Any:
    result = await session.call("contextls/addRegion", uri=uri, range={"start": start, "end": end})
    return msgspec.convert(result, AddResult)


async def test_a_partial_line_merges_as_the_whole_lines_of_the_file(
    session: Session, workspace: Path
) -> None:
    (workspace / "m.py").write_text("aaaa = 1\nbbbb = 2\ncccc = 3\n")
    uri = session.uri("m.py")
    await add(session, uri, at(0, 0), at(1, 0))  # line 1, whole
    merged = await add(session, uri, at(1, 4), at(1, 8))  # the middle of line 2 to its end
    assert merged.item.label == "m.py:1-2"
    assert merged.item.content == "aaaa = 1\nbbbb = 2"
    assert not merged.item.stale


async def test_a_region_sent_with_its_text_merges_from_the_buffer_the_editor_has(
    session: Session, workspace: Path
) -> None:
    (workspace / "n.py").write_text("one = 1\ntwo = 2\nthree = 3\n")
    uri = session.uri("n.py")
    await add(session, uri, at(2, 0), at(3, 0))
    result = await session.call(
        "contextls/addRegion",
        uri=uri,
        range={"start": at(1, 6), "end": at(1, 7)},
        text="2",  # only the character the person selected
    )
    merged = msgspec.convert(result, AddResult)
    assert merged.item.label == "n.py:2-3"
    assert merged.item.content == "two = 2\nthree = 3"
