"""Every window request against the real server: adds, eviction, pins, dedup, render, archive."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import msgspec

from contextls.protocol import (
    AddResult,
    ClearResult,
    ErrorCode,
    ListResult,
    PinResult,
    RemoveResult,
    RenderResult,
    RestoreResult,
    SearchResult,
    Status,
)

from .conftest import Session, Starter, window_state


def decode(result: Any, kind: type[msgspec.Struct]) -> Any:
    """Results must match the protocol types exactly (camelCase, every field)."""
    return msgspec.convert(result, kind)


async def test_seed_fifo_example_50_items(session: Session) -> None:
    for n in range(1, 51):
        result = decode(await session.call("contextls/addText", content=f"item-{n}"), AddResult)
        assert result.evicted == []
    result = decode(await session.call("contextls/addText", content="item-51"), AddResult)
    assert [item.content for item in result.evicted] == ["item-1"]
    assert result.status.item_count == 50
    listed = decode(await session.call("contextls/list"), ListResult)
    assert [item.content for item in listed.items] == [f"item-{n}" for n in range(2, 52)]
    assert [item.id for item in listed.items] == [f"ctx-{n}" for n in range(2, 52)]
    await session.wait_for(lambda: bool(session.evictions))
    assert session.evictions[0]["reason"] == "maxItems"
    assert [item["id"] for item in session.evictions[0]["items"]] == ["ctx-1"]


async def test_token_budget_eviction_notifies_and_reports(start: Starter) -> None:
    session = await start({"maxTokens": 60})
    words = " ".join(["alpha"] * 20)  # 20 tokens in o200k_base
    for _ in range(3):
        await session.call("contextls/addText", content=words + f" {_}")
    status = decode(await session.call("contextls/status"), Status)
    assert status.tokens <= 60
    result = decode(await session.call("contextls/addText", content=words + " x"), AddResult)
    assert result.evicted, "the budget must force an eviction"
    assert result.status.tokens <= 60
    assert result.status.evicted_total >= 1
    assert result.status.last_evicted[0].id == result.evicted[-1].id
    await session.wait_for(lambda: any(e["reason"] == "maxTokens" for e in session.evictions))
    await session.wait_for(lambda: session.statuses[-1]["revision"] == result.status.revision)


async def test_status_shape_and_next_eviction(session: Session) -> None:
    await session.call("contextls/addText", content="first")
    await session.call("contextls/addText", content="second")
    status = decode(await session.call("contextls/status"), Status)
    assert status.item_count == 2
    assert status.max_items == 50 and status.max_tokens == 8000
    assert status.encoding == "o200k_base"
    assert status.next_eviction is not None and status.next_eviction.id == "ctx-1"
    assert status.workspace == session.root.as_uri()
    assert 0 < status.percent < 1


async def test_pins_are_never_evicted(start: Starter) -> None:
    session = await start({"maxItems": 3})
    first = decode(await session.call("contextls/addText", content="keep me", pin=True), AddResult)
    for n in range(6):
        await session.call("contextls/addText", content=f"filler {n}")
    listed = decode(await session.call("contextls/list"), ListResult)
    assert listed.items[0].id == first.item.id and listed.items[0].pinned
    unpinned = decode(await session.call("contextls/pin", id=first.item.id, pin=False), PinResult)
    assert not unpinned.item.pinned
    assert unpinned.status.next_eviction is not None
    assert unpinned.status.next_eviction.id == first.item.id


async def test_item_that_cannot_fit_beside_pins_is_refused(start: Starter) -> None:
    session = await start({"maxTokens": 60})
    await session.call("contextls/addText", content=" ".join(["pinned"] * 35), pin=True)
    before = await session.call("contextls/status")
    error = await session.error("contextls/addText", content=" ".join(["other"] * 15))
    assert error.code == ErrorCode.NO_ROOM
    assert "pinned" in str(error)
    assert window_state(await session.call("contextls/status")) == window_state(before)


async def test_item_larger_than_budget_is_refused(start: Starter) -> None:
    session = await start({"maxTokens": 10})
    error = await session.error("contextls/addText", content="word " * 50)
    assert error.code == ErrorCode.ITEM_TOO_LARGE
    assert "budget is 10" in str(error)
    assert decode(await session.call("contextls/status"), Status).item_count == 0


async def test_regions_dedup_merge_and_file_absorbs(session: Session) -> None:
    first = decode(
        await session.call("contextls/addRegion", **session.region("src/app.py", 1, 3)), AddResult
    )
    assert first.item.label == "src/app.py:1-3"
    assert first.item.metadata["language"] == "python"
    again = decode(
        await session.call("contextls/addRegion", **session.region("src/app.py", 1, 3)), AddResult
    )
    assert again.deduplicated and again.item.id == first.item.id
    other = decode(
        await session.call("contextls/addRegion", **session.region("src/app.py", 10, 12)), AddResult
    )
    assert not other.deduplicated
    merged = decode(
        await session.call("contextls/addRegion", **session.region("src/app.py", 4, 9)), AddResult
    )
    assert merged.deduplicated
    assert sorted(merged.merged) == sorted([first.item.id, other.item.id])
    assert (merged.item.metadata["startLine"], merged.item.metadata["endLine"]) == (1, 12)
    assert merged.item.content.startswith("def f1():") and "return 4" in merged.item.content
    whole = decode(
        await session.call("contextls/addFile", uri=session.uri("src/app.py")), AddResult
    )
    assert whole.deduplicated and whole.merged == [merged.item.id]
    region_again = decode(
        await session.call("contextls/addRegion", **session.region("src/app.py", 2, 2)), AddResult
    )
    assert region_again.item.id == whole.item.id and region_again.deduplicated
    listed = decode(await session.call("contextls/list"), ListResult)
    assert [item.kind for item in listed.items] == ["file"]


async def test_identical_text_is_not_duplicated(session: Session) -> None:
    one = decode(
        await session.call("contextls/addText", content="same words", kind="error"), AddResult
    )
    await session.call("contextls/addText", content="something else")
    two = decode(
        await session.call("contextls/addText", content="same words", kind="error"), AddResult
    )
    assert two.deduplicated and two.item.id == one.item.id
    # Refreshed: the newest to be evicted; with nothing of it changed, its place in the
    # render is kept (renderOrder stable: a prompt cache keeps what comes before the end).
    assert two.status.next_eviction is not None and two.status.next_eviction.id == "ctx-2"
    listed = decode(await session.call("contextls/list"), ListResult)
    assert [item.id for item in listed.items] == ["ctx-1", "ctx-2"]


async def test_add_symbol_labels_and_renders(session: Session) -> None:
    params = session.region("src/app.py", 4, 5)
    result = decode(
        await session.call("contextls/addSymbol", name="f2", symbolKind=12, **params), AddResult
    )
    assert result.item.metadata["symbol"] == "f2"
    assert result.item.metadata["symbolKind"] == "Function"
    rendered = decode(await session.call("contextls/render"), RenderResult)
    assert "### Code: f2 (from src/app.py:4-5) · ctx-1\n```python\ndef f2():" in rendered.text


async def test_render_markdown_xml_json_and_budget(session: Session) -> None:
    await session.call("contextls/addRegion", **session.region("src/app.py", 1, 2))
    await session.call("contextls/addText", content="Use ```fences``` carefully", kind="text")
    await session.call("contextls/addText", content="Traceback: boom", kind="error")
    markdown = decode(await session.call("contextls/render"), RenderResult)
    assert markdown.text.startswith(
        "## Context\n\n### Code (from src/app.py:1-2) · ctx-1\n```python\n"
    )
    assert "````text\nUse ```fences``` carefully\n````" in markdown.text
    counted = await session.call("contextls/countTokens", text=markdown.text)
    assert counted["tokens"] == markdown.tokens
    xml = decode(await session.call("contextls/render", format="xml"), RenderResult)
    root = ET.fromstring(xml.text)
    assert [item.get("id") for item in root.iter("item")] == markdown.item_ids
    as_json = decode(await session.call("contextls/render", format="json"), RenderResult)
    assert [entry["id"] for entry in json.loads(as_json.text)["context"]] == markdown.item_ids
    only_errors = decode(await session.call("contextls/render", kinds=["error"]), RenderResult)
    assert only_errors.item_ids == ["ctx-3"]
    latest = decode(await session.call("contextls/render", limit=1), RenderResult)
    assert latest.item_ids == ["ctx-3"]
    small = decode(await session.call("contextls/render", maxTokens=40), RenderResult)
    assert small.tokens <= 40
    assert small.omitted_ids and "ctx-3" in small.item_ids
    assert set(small.item_ids) | set(small.omitted_ids) == set(markdown.item_ids)


async def test_remove_clear_search_restore(start: Starter) -> None:
    session = await start({"maxItems": 2})
    await session.call("contextls/addText", content="the quick brown fox")
    await session.call("contextls/addText", content="lazy dogs sleep")
    await session.call("contextls/addText", content="ordinary words")  # evicts ctx-1
    hits = decode(await session.call("contextls/search", query="fox"), SearchResult)
    assert [hit.item.id for hit in hits.hits] == ["ctx-1"]
    hit = hits.hits[0]
    assert hit.reason == "maxItems" and hit.snippet == "the quick brown fox"
    assert [hit.snippet[start:end] for start, end in hit.highlights] == ["fox"]
    restored = decode(await session.call("contextls/restore", ids=["ctx-1"]), RestoreResult)
    assert [item.id for item in restored.items] == ["ctx-1"]
    assert [item.id for item in restored.evicted] == ["ctx-2"]
    removed = decode(await session.call("contextls/remove", ids=["ctx-3"]), RemoveResult)
    assert removed.removed == ["ctx-3"] and removed.status.item_count == 1
    assert decode(await session.call("contextls/search", query="ordinary"), SearchResult).hits
    cleared = decode(await session.call("contextls/clear"), ClearResult)
    assert cleared.cleared == 1 and cleared.cleared_ids == ["ctx-1"]
    assert cleared.status.item_count == 0 and cleared.status.archived_count == 3
    rendered = decode(await session.call("contextls/render", query="quick fox"), RenderResult)
    assert "## Relevant history" in rendered.text and rendered.history_ids == ["ctx-1"]
    error = await session.error("contextls/restore", ids=["ctx-99"])
    assert error.code == ErrorCode.NOT_ARCHIVED


async def test_unknown_ids_change_nothing(session: Session) -> None:
    await session.call("contextls/addText", content="keep")
    before = await session.call("contextls/status")
    error = await session.error("contextls/remove", ids=["ctx-1", "ctx-42"])
    assert error.code == ErrorCode.UNKNOWN_ITEM and "ctx-42" in str(error)
    error = await session.error("contextls/pin", id="ctx-42")
    assert error.code == ErrorCode.UNKNOWN_ITEM
    assert window_state(await session.call("contextls/status")) == window_state(before)


async def test_count_tokens_both_encodings(session: Session) -> None:
    assert (await session.call("contextls/countTokens", text="hello world"))["tokens"] == 2
    result = await session.call("contextls/countTokens", text="hello world", encoding="cl100k_base")
    assert (result["tokens"], result["encoding"], result["exact"]) == (2, "cl100k_base", True)
    assert (result["files"], result["skipped"], result["refused"]) == ([], [], [])


def _range(line: int, start: int, end: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}


async def test_a_piece_of_one_line_is_labelled_with_its_columns(
    session: Session, workspace: Any
) -> None:
    long_line = "var x = [" + ", ".join(str(n) for n in range(20_000)) + "];"
    (workspace / "long.js").write_text(f"// head\n{long_line}\n\nshort();\n")
    uri = session.uri("long.js")
    # As an editor sends it: the range and the text it holds.
    piece = await session.call(
        "contextls/addRegion", uri=uri, range=_range(1, 16, 316), text=long_line[16:316]
    )
    assert piece["item"]["label"] == "long.js:2:17-316"
    assert piece["item"]["content"] == long_line[16:316]
    # A whole line (from its start to its end) is labelled as the line.
    whole = await session.call(
        "contextls/addRegion", uri=uri, range=_range(3, 0, 8), text="short();"
    )
    assert whole["item"]["label"] == "long.js:4"
    # Lines above it: the piece moves, and keeps its columns.
    (workspace / "long.js").write_text(f"// one more\n// head\n{long_line}\n\nshort();\n")
    await session.call("contextls/refresh")  # follows what changed on disk first
    listed = await session.call("contextls/list")
    labels = {item["id"]: item["label"] for item in listed["items"]}
    assert labels[piece["item"]["id"]] == "long.js:3:17-316"
    # Its own line changed and read again: it holds the whole line, named as the line.
    (workspace / "long.js").write_text("// one more\n// head\nvar y = 1;\n\nshort();\n")
    await session.call("contextls/refresh", ids=[piece["item"]["id"]])
    listed = await session.call("contextls/list")
    (item,) = [i for i in listed["items"] if i["id"] == piece["item"]["id"]]
    assert (item["label"], item["content"]) == ("long.js:3", "var y = 1;")


async def test_a_pasted_log_as_a_query_is_searched_by_its_first_words(start: Starter) -> None:
    session = await start({"maxItems": 1})
    log = "upload failed " + " ".join(f"frame{n} line {n}" for n in range(1_000))
    await session.call("contextls/addText", content=log[:500])  # the log's first 40 frames
    await session.call("contextls/addText", content="ordinary words")  # evicts ctx-1
    found = decode(
        await session.call("contextls/search", query=log[:10_000], mode="keyword"), SearchResult
    )
    assert [hit.item.id for hit in found.hits] == ["ctx-1"]
    assert found.warning is not None and "query's first 32 words" in found.warning
