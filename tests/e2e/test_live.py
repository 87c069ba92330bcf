"""Live context over LSP: items follow their files, on disk and in an editor.

A whole-file item renders the file as it is now; a region moves when lines
come or go above it and is stale when its own text changed or its file went;
``contextls/refresh`` reads it again. Changes made by another process reach
a client that sends nothing, within a second.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from .conftest import TIMEOUT, Session, Starter

FOLLOW_WITHIN = TIMEOUT
"""Seconds a test waits for the server to notice (it looks every 0.5 s): only a hang fails
it; how soon is timed in tests/bench."""


def lines(n: int, prefix: str = "line") -> str:
    return "".join(f"{prefix} {i}\n" for i in range(1, n + 1))


async def items(session: Session) -> dict[str, dict[str, Any]]:
    listed = await session.call("contextls/list")
    return {item["id"]: item for item in listed["items"]}


async def wait_for_item(
    session: Session, item_id: str, check: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """Poll ``contextls/list`` until ``check(item)`` holds (the watch runs on its own)."""
    deadline = time.monotonic() + FOLLOW_WITHIN
    while True:
        item = (await items(session))[item_id]
        if check(item):
            return item
        if time.monotonic() > deadline:
            raise AssertionError(f"{item_id} did not change as expected: {item}")
        await asyncio.sleep(0.05)


async def test_a_whole_file_renders_as_it_is_now(session: Session, workspace: Path) -> None:
    notes = workspace / "notes.md"
    notes.write_text("first draft\n")
    added = await session.call("contextls/addFile", uri=notes.as_uri())
    before = added["item"]["tokens"]
    notes.write_text("second draft, with a good many more words than the first had\n")

    item = await wait_for_item(session, "ctx-1", lambda i: "second draft" in i["content"])
    assert item["tokens"] > before and not item["stale"]
    rendered = await session.call("contextls/render")
    assert "second draft" in rendered["text"] and "first draft" not in rendered["text"]
    status = await session.call("contextls/status")
    assert status["tokens"] == rendered["tokens"]  # what is counted is what is rendered


async def test_a_file_that_grows_past_the_budget_evicts_and_says_so(
    start: Starter, workspace: Path
) -> None:
    session = await start({"maxTokens": 400})
    (workspace / "grows.txt").write_text("small\n")
    (workspace / "other.txt").write_text("older item " * 20 + "\n")
    await session.call("contextls/addFile", uri=(workspace / "other.txt").as_uri())
    await session.call("contextls/addFile", uri=(workspace / "grows.txt").as_uri())
    (workspace / "grows.txt").write_text("words and more words " * 92 + "\n")

    await session.wait_for(lambda: any(e["items"] for e in session.evictions), FOLLOW_WITHIN)
    evicted = [item["id"] for notice in session.evictions for item in notice["items"]]
    assert evicted == ["ctx-1"]
    status = await session.call("contextls/status")
    assert status["tokens"] <= 400 and status["itemCount"] == 1


async def test_a_region_moves_when_lines_come_above_it(session: Session, workspace: Path) -> None:
    source = workspace / "mod.py"
    source.write_text(lines(30))
    await session.call("contextls/addRegion", **session.region("mod.py", 10, 12))
    source.write_text("# a header\n# of three\n# lines\n" + lines(30))

    item = await wait_for_item(session, "ctx-1", lambda i: i["metadata"]["startLine"] == 13)
    assert (item["metadata"]["endLine"], item["stale"]) == (15, False)
    assert item["content"] == "line 10\nline 11\nline 12\n"
    assert item["label"] == "mod.py:13-15"


async def test_a_region_whose_text_changed_is_stale_until_refreshed(
    session: Session, workspace: Path
) -> None:
    source = workspace / "mod.py"
    source.write_text(lines(30))
    await session.call("contextls/addRegion", **session.region("mod.py", 10, 12))
    source.write_text(lines(30).replace("line 11\n", "line eleven, rewritten\n"))

    item = await wait_for_item(session, "ctx-1", lambda i: i["stale"])
    assert item["content"] == "line 10\nline 11\nline 12\n"  # it keeps what it had
    assert (await session.call("contextls/status"))["staleCount"] == 1
    rendered = await session.call("contextls/render")
    assert "[stale: the file changed here since this was added]" in rendered["text"]

    refreshed = await session.call("contextls/refresh")
    (again,) = refreshed["refreshed"]
    assert again["content"] == "line 10\nline eleven, rewritten\nline 12\n"
    assert not again["stale"] and refreshed["status"]["staleCount"] == 0

    (kept,) = refreshed["archived"]  # what the window held is archived, not lost
    assert kept["id"] != "ctx-1" and kept["content"] == "line 10\nline 11\nline 12\n"
    restored = await session.call("contextls/restore", ids=[kept["id"]])
    assert [item["content"] for item in restored["items"]] == [kept["content"]]


async def test_a_deleted_file_leaves_stale_items(session: Session, workspace: Path) -> None:
    gone = workspace / "gone.py"
    gone.write_text(lines(5))
    await session.call("contextls/addFile", uri=gone.as_uri())
    gone.unlink()

    item = await wait_for_item(session, "ctx-1", lambda i: i["stale"])
    assert item["content"] == lines(5)
    error = await session.error("contextls/refresh", ids=["ctx-1"])
    assert "gone.py" in str(error)
    assert (await items(session))["ctx-1"]["stale"]


async def test_refresh_of_text_is_refused_clearly(session: Session) -> None:
    await session.call("contextls/addText", kind="text", content="a note")
    error = await session.error("contextls/refresh", ids=["ctx-1"])
    assert "not from a file" in str(error)


async def test_an_editors_unsaved_edit_moves_a_region(session: Session, workspace: Path) -> None:
    source = workspace / "mod.py"
    source.write_text(lines(20))
    uri = source.as_uri()
    await session.call("contextls/addRegion", **session.region("mod.py", 5, 6))
    session.notify(
        lsp.TEXT_DOCUMENT_DID_OPEN,
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=lines(20)
            )
        ),
    )
    session.notify(
        lsp.TEXT_DOCUMENT_DID_CHANGE,
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(
                        start=lsp.Position(line=0, character=0),
                        end=lsp.Position(line=0, character=0),
                    ),
                    text="import os\nimport sys\n",
                )
            ],
        ),
    )
    item = await wait_for_item(session, "ctx-1", lambda i: i["metadata"]["startLine"] == 7)
    assert item["metadata"]["endLine"] == 8 and not item["stale"]
    assert source.read_text() == lines(20)  # only the buffer changed


async def test_another_process_change_reaches_a_silent_client(
    start: Starter, workspace: Path
) -> None:
    watcher = await start()
    await watcher.call("contextls/status")
    writer = await start()
    seen = len(watcher.statuses)
    began = time.monotonic()
    await writer.call("contextls/addText", kind="text", content="from the other client")
    # The watcher asks nothing: only its own look at the database can bring the change.
    await watcher.wait_for(lambda: any(s["itemCount"] == 1 for s in watcher.statuses[seen:]))
    print(f"a silent client saw the change after {time.monotonic() - began:.2f} s")


async def test_settings_live_with_the_window(start: Starter, workspace: Path) -> None:
    first = await start({"maxItems": 7})
    assert (await first.call("contextls/status"))["maxItems"] == 7
    second = await start({"maxItems": 20})  # a window with settings keeps them
    assert (await second.call("contextls/status"))["maxItems"] == 7

    changed = await second.call("contextls/configure", settings={"maxTokens": 2000})
    assert changed["changed"] == ["maxTokens"] and set(changed["chosen"]) == {
        "maxItems",
        "maxTokens",
    }
    await first.wait_for(
        lambda: any(s["maxTokens"] == 2000 for s in first.statuses), timeout=FOLLOW_WITHIN
    )

    await first.call("contextls/addText", kind="text", content="pinned " * 300, pin=True)
    refused = await first.error("contextls/configure", settings={"maxTokens": 100})
    assert "pinned" in str(refused)
    assert (await first.call("contextls/status"))["maxTokens"] == 2000

    reset = await first.call("contextls/configure", reset=["maxItems"])
    assert reset["settings"]["maxItems"] == 50 and reset["chosen"] == ["maxTokens"]
