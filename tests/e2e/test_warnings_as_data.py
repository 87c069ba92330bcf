"""Warnings as data: a client that declares ``experimental.contextls.didWarn`` gets what
the server warns of as fields (the item and the kind of secret; the folder and why it is
refused) and words it itself; any other client gets the same warning in words
(``window/showMessage``), as every LSP client shows them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .conftest import Starter

TAKES_DATA: dict[str, Any] = {"experimental": {"contextls": {"didWarn": True}}}
SECRET = "AWS_ACCESS_KEY_ID=AKIAZ7QK3N5WXYV2JD4P\n"
SYSTEM_FOLDER = Path("/etc")


async def test_a_client_that_takes_data_gets_the_secret_and_the_refused_folder_as_fields(
    start: Starter, workspace: Path
) -> None:
    (workspace / "settings.txt").write_text(SECRET)
    editor = await start(folders=[workspace, SYSTEM_FOLDER], capabilities=TAKES_DATA)
    # A refused folder is said once ``initialized`` allows notifications of the server's own.
    await editor.wait_for(lambda: any(w.get("folder") for w in editor.warned))
    (refused,) = [w for w in editor.warned if w.get("folder")]
    assert refused["folder"]["folder"] == SYSTEM_FOLDER.as_uri()
    assert "system folder" in refused["folder"]["reason"]
    assert refused["message"].startswith(f"workspace folder {SYSTEM_FOLDER.as_uri()} is ignored")

    added = await editor.call("contextls/addFile", uri=editor.uri("settings.txt"))
    item = added["item"]["id"]
    found = {"item": item, "where": "settings.txt", "found": "an AWS access key id"}
    assert added["secrets"] == [found]
    await editor.wait_for(lambda: any(w.get("secret") for w in editor.warned))
    (secret,) = [w for w in editor.warned if w.get("secret")]
    assert secret["secret"] == found
    assert secret["workspace"] == workspace.as_uri()
    assert "AKIAZ7QK3N5WXYV2JD4P" not in str(secret)
    # Said as data, so not said again in words.
    await editor.call("contextls/status")
    assert editor.messages == []


async def test_any_other_client_hears_the_same_warnings_in_words(
    start: Starter, workspace: Path
) -> None:
    (workspace / "settings.txt").write_text(SECRET)
    editor = await start(folders=[workspace, SYSTEM_FOLDER])
    await editor.call("contextls/addFile", uri=editor.uri("settings.txt"))
    await editor.wait_for(lambda: len(editor.messages) >= 2)
    assert any(
        m.startswith(f"contextls: workspace folder {SYSTEM_FOLDER.as_uri()} is ignored")
        for m in editor.messages
    )
    assert any(
        m.startswith("contextls: settings.txt seems to contain an AWS access key id")
        for m in editor.messages
    )
    assert editor.warned == []
