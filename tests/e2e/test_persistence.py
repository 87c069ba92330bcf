"""Restarts, two server processes on one store, corrupt databases, folders and routing."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from contextls.protocol import ErrorCode

from .conftest import Starter, stop


async def test_restart_restores_window_pins_ids_and_archive(start: Starter) -> None:
    first = await start({"maxItems": 3})
    await first.call("contextls/addText", content="pinned note", pin=True)
    for n in range(4):
        await first.call("contextls/addText", content=f"note {n}")
    before_items = (await first.call("contextls/list"))["items"]
    before_status = await first.call("contextls/status")
    await stop(first)

    second = await start({"maxItems": 3})
    assert (await second.call("contextls/list"))["items"] == before_items
    after = await second.call("contextls/status")
    # The embedding backlog moves on its own in the background; the window must not.
    after.pop("semantic", None)
    before_status.pop("semantic", None)
    assert after == before_status
    added = await second.call("contextls/addText", content="after restart")
    assert added["item"]["id"] == "ctx-6", "ids continue, never reused"
    hits = await second.call("contextls/search", query="note")
    assert {hit["item"]["id"] for hit in hits["hits"]} >= {"ctx-2", "ctx-3"}


async def test_two_processes_share_one_workspace(start: Starter) -> None:
    emacs = await start()
    vscode = await start()
    await emacs.call("contextls/addText", content="from emacs")
    listed = await vscode.call("contextls/list")
    assert [item["content"] for item in listed["items"]] == ["from emacs"]
    await vscode.wait_for(lambda: any(s["itemCount"] == 1 for s in vscode.statuses))
    added = await vscode.call("contextls/addText", content="from vscode")
    assert added["item"]["id"] == "ctx-2"
    status = await emacs.call("contextls/status")
    assert status["itemCount"] == 2 and status["revision"] == added["status"]["revision"]
    await emacs.call("contextls/remove", ids=["ctx-1"])
    assert [i["id"] for i in (await vscode.call("contextls/list"))["items"]] == ["ctx-2"]


async def test_corrupt_database_is_moved_aside(start: Starter, storage: Path) -> None:
    storage.parent.mkdir(parents=True, exist_ok=True)
    storage.write_bytes(b"this is not a database at all" * 100)
    session = await start()
    assert (await session.call("contextls/status"))["itemCount"] == 0
    await session.wait_for(lambda: any("corrupt" in message for message in session.messages))
    assert list(storage.parent.glob("*.corrupt-*"))
    await session.call("contextls/addText", content="fresh start")


async def test_memory_storage(start: Starter) -> None:
    session = await start({"storage": ":memory:"})
    result = await session.call("contextls/addText", content="ephemeral")
    assert result["item"]["id"] == "ctx-1"


async def test_routing_between_folders(start: Starter, tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        folder.mkdir()
        (folder / "a.py").write_text(f"name = {folder.name!r}\n")
    session = await start(folders=[one, two], root=one)
    error = await session.error("contextls/addText", content="which one?")
    assert error.code == ErrorCode.NO_WORKSPACE and "workspace" in str(error)
    added = await session.call("contextls/addFile", uri=(two / "a.py").as_uri())
    assert added["status"]["workspace"] == two.as_uri()
    named = await session.call("contextls/status", workspace=str(two))
    assert named["itemCount"] == 1
    assert (await session.call("contextls/status", workspace=one.as_uri()))["itemCount"] == 0
    error = await session.error("contextls/status", workspace="/nowhere")
    assert error.code == ErrorCode.NO_WORKSPACE

    session.notify(
        lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS,
        lsp.DidChangeWorkspaceFoldersParams(
            event=lsp.WorkspaceFoldersChangeEvent(
                added=[], removed=[lsp.WorkspaceFolder(uri=one.as_uri(), name="one")]
            )
        ),
    )
    await session.wait_for(lambda: True)
    status = await session.call("contextls/status")  # now the only folder
    assert status["workspace"] == two.as_uri()


async def test_no_workspace_is_a_clear_error(start: Starter) -> None:
    session = await start(folders=[])
    error = await session.error("contextls/status")
    assert error.code == ErrorCode.NO_WORKSPACE and "no workspace folder" in str(error)
    assert (await session.call("contextls/countTokens", text="still works"))["tokens"] > 0
