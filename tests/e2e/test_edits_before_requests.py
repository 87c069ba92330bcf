"""A request is answered with every editor edit sent before it.

The server folds editors' changes into items when it looks (twice a second);
a request that follows a `didChange` must not wait for that look: a render
sent right after an edit (gptel asks for one as the person presses send)
holds the edit, and so do `list` and `status`.
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from .conftest import Session


def open_buffer(session: Session, uri: str, text: str) -> None:
    session.notify(
        lsp.TEXT_DOCUMENT_DID_OPEN,
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        ),
    )


def type_at(session: Session, uri: str, version: int, line: int, text: str) -> None:
    at = lsp.Position(line=line, character=0)
    session.notify(
        lsp.TEXT_DOCUMENT_DID_CHANGE,
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=at), text=text)
            ],
        ),
    )


async def test_a_render_right_after_an_edit_holds_it(session: Session, workspace: Path) -> None:
    source = workspace / "notes.py"
    source.write_text("first = 1\n")
    uri = source.as_uri()
    open_buffer(session, uri, "first = 1\n")
    added = (await session.call("contextls/addFile", uri=uri))["item"]
    before = await session.call("contextls/status")
    for version in range(2, 12):
        type_at(session, uri, version, 0, f"edit_{version} = {version}\n")
        rendered = await session.call("contextls/render")
        assert f"edit_{version} = {version}" in rendered["text"]
    (item,) = (await session.call("contextls/list"))["items"]
    assert item["content"].startswith("edit_11 = 11\n")
    status = await session.call("contextls/status")
    # The status counts the edits too: it grew by what the item grew.
    assert status["tokens"] - before["tokens"] == item["tokens"] - added["tokens"] > 0


async def test_a_region_moved_by_an_edit_is_where_the_next_request_sees_it(
    session: Session, workspace: Path
) -> None:
    source = workspace / "mod.py"
    text = "".join(f"line {n}\n" for n in range(1, 21))
    source.write_text(text)
    uri = source.as_uri()
    open_buffer(session, uri, text)
    await session.call("contextls/addRegion", **session.region("mod.py", 5, 6))
    type_at(session, uri, 2, 0, "import os\n")
    (item,) = (await session.call("contextls/list"))["items"]
    assert (item["metadata"]["startLine"], item["metadata"]["endLine"]) == (6, 7)
