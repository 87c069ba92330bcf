"""Files and regions: where the text comes from, and every refusal."""

from __future__ import annotations

import os
from pathlib import Path

from lsprotocol import types as lsp

from contextls.protocol import ErrorCode

from .conftest import Session, Starter, window_state


def open_document(session: Session, uri: str, text: str) -> None:
    session.notify(
        lsp.TEXT_DOCUMENT_DID_OPEN,
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="text", version=1, text=text)
        ),
    )


async def assert_refused(
    session: Session, code: int, words: str, method: str, **params: object
) -> None:
    before = await session.call("contextls/status")
    error = await session.error(method, **params)
    assert error.code == code, error
    assert words in str(error)
    assert window_state(await session.call("contextls/status")) == window_state(before)


async def test_file_outside_the_workspace_is_refused(session: Session, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("not yours\n")
    await assert_refused(
        session,
        ErrorCode.OUTSIDE_WORKSPACE,
        "outside the workspace",
        "contextls/addFile",
        uri=outside.as_uri(),
    )


async def test_symlink_out_of_the_workspace_is_refused(session: Session, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x = 1\n")
    os.symlink(outside, session.root / "link.py")
    await assert_refused(
        session,
        ErrorCode.OUTSIDE_WORKSPACE,
        "outside the workspace",
        "contextls/addFile",
        uri=session.uri("link.py"),
    )
    await assert_refused(
        session,
        ErrorCode.OUTSIDE_WORKSPACE,
        "outside",
        "contextls/addRegion",
        **session.region("link.py", 1, 1),
    )


async def test_dot_dot_escape_is_refused(session: Session) -> None:
    uri = session.root.as_uri() + "/../../etc/passwd"
    await assert_refused(
        session, ErrorCode.OUTSIDE_WORKSPACE, "outside", "contextls/addFile", uri=uri
    )


async def test_missing_binary_and_too_big_files(start: Starter) -> None:
    session = await start({"maxFileBytes": 100})
    root = session.root
    (root / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (root / "big.txt").write_text("x" * 101)
    (root / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    await assert_refused(
        session,
        ErrorCode.FILE_NOT_FOUND,
        "does not exist",
        "contextls/addFile",
        uri=session.uri("nope.py"),
    )
    await assert_refused(
        session,
        ErrorCode.BINARY_FILE,
        "blob.bin is binary",
        "contextls/addFile",
        uri=session.uri("blob.bin"),
    )
    await assert_refused(
        session,
        ErrorCode.BINARY_FILE,
        "not UTF-8",
        "contextls/addFile",
        uri=session.uri("latin1.txt"),
    )
    await assert_refused(
        session,
        ErrorCode.FILE_TOO_LARGE,
        "101 bytes",
        "contextls/addFile",
        uri=session.uri("big.txt"),
    )
    await assert_refused(
        session,
        ErrorCode.FILE_TOO_LARGE,
        "maxFileBytes",
        "contextls/addRegion",
        **session.region("big.txt", 1, 1),
    )
    await assert_refused(
        session, ErrorCode.FILE_NOT_FOUND, "directory", "contextls/addFile", uri=session.uri("src")
    )


async def test_bad_ranges(session: Session) -> None:
    await assert_refused(
        session,
        ErrorCode.INVALID_RANGE,
        "has 120 lines",
        "contextls/addRegion",
        **session.region("src/app.py", 500, 501),
    )
    backwards = {
        "uri": session.uri("src/app.py"),
        "range": {"start": {"line": 5, "character": 0}, "end": {"line": 2, "character": 0}},
    }
    await assert_refused(session, -32602, "$.range", "contextls/addRegion", **backwards)
    blank = {
        "uri": session.uri("src/app.py"),
        "range": {"start": {"line": 2, "character": 0}, "end": {"line": 3, "character": 0}},
    }
    await assert_refused(session, -32602, "no text", "contextls/addRegion", **blank)
    await assert_refused(
        session, -32602, "not a file:// URI", "contextls/addFile", uri="https://x/y.py"
    )


async def test_open_document_text_wins_over_disk(session: Session) -> None:
    uri = session.uri("src/app.py")
    open_document(session, uri, "unsaved = 42\n")
    result = await session.call("contextls/addFile", uri=uri)
    assert result["item"]["content"] == "unsaved = 42\n"
    region = await session.call(
        "contextls/addRegion",
        uri=session.uri("README.md"),
        range={"start": {"line": 0, "character": 2}, "end": {"line": 0, "character": 9}},
    )
    assert region["item"]["content"] == "Project"


async def test_an_open_buffer_with_a_nul_is_binary_too(session: Session) -> None:
    uri = session.uri("src/app.py")
    open_document(session, uri, "text\0with a nul\n")
    await assert_refused(
        session, ErrorCode.BINARY_FILE, "src/app.py is binary", "contextls/addFile", uri=uri
    )
    listed = await session.call("contextls/list")
    assert listed["items"] == []


async def test_editing_marks_items_stale(session: Session) -> None:
    uri = session.uri("README.md")
    text = (session.root / "README.md").read_text()
    await session.call("contextls/addRegion", **session.region("README.md", 3, 3))
    open_document(session, uri, text)
    session.notify(
        lsp.TEXT_DOCUMENT_DID_CHANGE,
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                lsp.TextDocumentContentChangeWholeDocument(text="# Project\n\nRewritten.\n")
            ],
        ),
    )
    await session.wait_for(
        lambda: bool(session.statuses) and session.statuses[-1]["staleCount"] == 1
    )
    listed = await session.call("contextls/list")
    assert listed["items"][0]["stale"] is True


async def test_client_supplied_text_for_unsaved_buffer(session: Session) -> None:
    result = await session.call(
        "contextls/addRegion",
        uri=session.uri("scratch.py"),
        text="print('hi')\n",
        range={"start": {"line": 9, "character": 0}, "end": {"line": 10, "character": 0}},
    )
    assert result["item"]["label"] == "scratch.py:10"
    assert result["item"]["content"] == "print('hi')\n"
