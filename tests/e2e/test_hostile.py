"""Malformed and hostile input over raw stdio: clear errors, no crash, nothing changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextls.protocol import ErrorCode
from contextls.protocol.framing import frame
from tests.support.rpc import TIMEOUT, is_response, read_all_messages

from .conftest import SERVER, window_state
from .rawio import RawStdio


def status(raw: RawStdio) -> dict[str, Any]:
    result: dict[str, Any] = raw.result("contextls/status", {})
    return result


@pytest.fixture
def raw(workspace: Path, storage: Path) -> Iterator[RawStdio]:
    """The real server with hand-made frames, to send what no LSP library would."""
    server = RawStdio.open(workspace, storage)
    yield server
    server.kill()


BAD_PARAMS: list[tuple[str, Any, str]] = [
    ("contextls/addText", {}, "content"),
    ("contextls/addText", {"content": 42}, "$.content"),
    ("contextls/addText", {"content": "x", "kind": "poem"}, "$.kind"),
    ("contextls/addText", {"content": "x", "pin": "yes"}, "$.pin"),
    ("contextls/addText", {"content": "x", "metadata": []}, "$.metadata"),
    ("contextls/addText", {"content": "   "}, "$.content"),
    ("contextls/addText", ["positional"], "object"),
    ("contextls/addRegion", {"uri": "file:///x"}, "range"),
    ("contextls/addRegion", {"uri": 1, "range": {}}, "$.uri"),
    (
        "contextls/addRegion",
        {
            "uri": "file:///x",
            "range": {"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 0}},
        },
        "$.range.start.line",
    ),
    ("contextls/addFile", {"uri": None}, "$.uri"),
    ("contextls/addSymbol", {"uri": "file:///x", "name": "", "range": {}}, "$.name"),
    ("contextls/remove", {"ids": []}, "$.ids"),
    ("contextls/remove", {"ids": ["../../etc"]}, "$.ids[0]"),
    ("contextls/pin", {"id": 7}, "$.id"),
    ("contextls/list", {"limit": 0}, "$.limit"),
    ("contextls/list", {"kinds": ["nope"]}, "$.kinds[0]"),
    ("contextls/render", {"format": "html"}, "$.format"),
    ("contextls/render", {"maxTokens": -5}, "$.maxTokens"),
    ("contextls/render", {"query": "retry " * 2000}, "$.query"),
    ("contextls/search", {"query": ""}, "$.query"),
    ("contextls/search", {"query": "retry " * 2000}, "$.query"),
    ("contextls/search", {"query": "x", "mode": "fuzzy"}, "$.mode"),
    ("contextls/search", {"query": "x", "limit": 10**30}, "$.limit"),
    ("contextls/restore", {"ids": "ctx-1"}, "$.ids"),
    ("contextls/countTokens", {"text": None}, "$.text"),
    ("contextls/countTokens", {"text": "x", "encoding": "gpt2"}, "$.encoding"),
    ("contextls/status", {"workspace": 12}, "$.workspace"),
    ("contextls/addText", {"content": "x", "pinned": True}, "pinned"),
    ("contextls/pin", {"id": "ctx-1", "pinned": False}, "pinned"),
    ("contextls/addFiles", {"targets": [{"uri": "/x", "pin": True}]}, "pin"),
    ("contextls/configure", {"settings": {"maxTokenz": 5}}, "maxTokenz"),
    ("contextls/addFile", {"uri": "file:///" + "a/" * 300_000}, "$.uri"),
    ("contextls/addFile", {"uri": "file:///tmp/" + "n" * 300}, "$.uri"),
    ("contextls/addFiles", {"targets": [{"uri": "/" + "a/" * 300_000}]}, "$.uri"),
    ("contextls/addFile", {"uri": "file:///tmp/bad%FF.py"}, "$.uri"),
]


def test_malformed_params_name_the_field_and_change_nothing(raw: RawStdio) -> None:
    raw.request("contextls/addText", {"content": "before"})
    before = status(raw)
    for method, params, field in BAD_PARAMS:
        reply = raw.request(method, params)
        assert "error" in reply, (method, params, reply)
        assert reply["error"]["code"] == -32602, (method, params, reply)
        assert field in reply["error"]["message"], (method, params, reply["error"]["message"])
    assert window_state(status(raw)) == window_state(before)
    assert raw.shutdown_and_exit() == 0


def test_garbage_frames_get_answers_and_the_server_lives(raw: RawStdio) -> None:
    raw.write(frame(b"{not json"))
    assert raw.next_response()["error"]["code"] == -32700
    raw.write(frame(b"[1, 2, 3]"))
    assert raw.next_response()["error"]["code"] == -32600
    raw.send({"jsonrpc": "1.0", "id": 99, "method": "contextls/status"})
    assert raw.reply_to(99)["error"]["code"] == -32600
    raw.send({"jsonrpc": "2.0", "id": 100, "method": "contextls/doesNotExist", "params": {}})
    assert raw.reply_to(100)["error"]["code"] == -32601
    raw.send({"jsonrpc": "2.0", "id": 101, "method": "textDocument/didOpen"})  # no params
    raw.send({"jsonrpc": "2.0", "method": "contextls/unknownNotification", "params": {}})
    raw.send({"jsonrpc": "2.0", "id": "str-id", "method": "contextls/status", "params": None})
    assert "result" in raw.reply_to("str-id")
    assert status(raw)["itemCount"] == 0
    assert raw.shutdown_and_exit() == 0


def test_a_lone_surrogate_is_refused_naming_its_field(raw: RawStdio) -> None:
    """JSON allows ``\\ud800`` alone; it is not text. Each message gets one answer naming
    where it is (within the params for a param, as every param's error does)."""
    sent = [
        b'{"jsonrpc":"2.0","id":1,"method":"contextls/addText","params":{"content":"a\\ud800"}}',
        b'{"jsonrpc":"2.0","id":2,"method":"contextls/status","params":{"\\udc00":1}}',
        b'{"jsonrpc":"2.0","id":3,"method":"contextls/\\ud800","params":{}}',
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"contextls/status","params":{}}',
    ]
    for body in sent:
        raw.write(frame(body))
    answers = [raw.reply_to(n) for n in (1, 2, 3)] + [raw.next_response()]
    fields = [(a["error"]["code"], a["error"]["data"]["field"]) for a in answers]
    assert fields == [
        (-32602, "$.content"),
        (-32602, "$ (a key)"),
        (-32600, "$.method"),
        (-32600, "$.id"),
    ]
    assert answers[3]["id"] is None and "lone surrogate" in answers[0]["error"]["message"]
    assert status(raw)["itemCount"] == 0  # nothing added
    assert raw.shutdown_and_exit() == 0


def test_hostile_values_are_contained(raw: RawStdio, workspace: Path) -> None:
    nested: Any = {"jsonrpc": "2.0", "method": "exit"}
    for _ in range(25):  # metadata that looks like messages is data (deeper than 32: refused)
        nested = {"jsonrpc": "2.0", "inner": nested}
    reply = raw.request("contextls/addText", {"content": "odd metadata", "metadata": nested})
    assert "result" in reply, reply
    assert reply["result"]["item"]["metadata"] == nested
    reply = raw.request("contextls/addText", {"content": "x" * 2_000_000})
    # A text has the size limit a file has, said before anything counts it.
    assert reply["error"]["code"] == ErrorCode.FILE_TOO_LARGE
    assert "maxFileBytes" in reply["error"]["message"]
    reply = raw.request("contextls/addFile", {"uri": "file:///dev/zero"})
    assert reply["error"]["code"] == ErrorCode.OUTSIDE_WORKSPACE
    reply = raw.request(
        "contextls/addFile", {"uri": workspace.as_uri() + "/%2e%2e/%2e%2e/etc/passwd"}
    )
    assert reply["error"]["code"] == ErrorCode.OUTSIDE_WORKSPACE
    reply = raw.request("contextls/search", {"query": 'NEAR(" OR * AND ") ^ "'})
    assert "result" in reply, reply
    reply = raw.request(
        "contextls/addRegion",
        {
            "uri": (workspace / "src" / "app.py").as_uri(),
            "range": {
                "start": {"line": 2**62, "character": 0},
                "end": {"line": 2**62, "character": 5},
            },
        },
    )
    assert reply["error"]["code"] == ErrorCode.INVALID_RANGE
    assert status(raw)["itemCount"] == 1
    assert raw.shutdown_and_exit() == 0


def test_pipelined_requests_all_answered_in_order(raw: RawStdio) -> None:
    for n in range(200):
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": 1000 + n,
                "method": "contextls/addText",
                "params": {"content": f"p{n}"},
            }
        )
    seen = []
    while len(seen) < 200:
        message = raw.read()
        if "id" in message and "method" not in message:
            seen.append(message["id"])
    assert seen == [1000 + n for n in range(200)]
    assert status(raw)["itemCount"] == 50
    assert raw.shutdown_and_exit() == 0


def test_large_message_round_trip(raw: RawStdio) -> None:
    text = ("large message line\n" * 40_000)[:700_000]
    reply = raw.request("contextls/countTokens", {"text": text})
    assert reply["result"]["tokens"] > 100_000
    assert raw.shutdown_and_exit() == 0


def test_exit_without_shutdown_and_eof(workspace: Path, storage: Path) -> None:
    server = RawStdio.open(workspace, storage)
    server.send({"jsonrpc": "2.0", "method": "exit"})
    assert server.wait(timeout=TIMEOUT) == 1
    server = RawStdio.open(workspace, storage)
    server.close_stdin()
    assert server.wait(timeout=TIMEOUT) == 0


def test_server_module_runs_as_documented() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "contextls", "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0 and "--tcp" in result.stdout
    result = subprocess.run(
        [sys.executable, "-m", "contextls", "serve", "--tcp", "0.0.0.0:2087"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2 and "loopback" in result.stderr


def test_serve_ends_on_empty_stdin_of_any_kind(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    for stdin in (subprocess.DEVNULL, empty.open("rb")):
        result = subprocess.run(SERVER, stdin=stdin, capture_output=True, timeout=30)
        assert result.returncode == 0


def test_a_whole_session_read_from_a_regular_file_is_answered(tmp_path: Path) -> None:
    """A file cannot be watched by the event loop; it is read on a thread instead."""

    def framed(message: dict[str, Any]) -> bytes:
        return frame(json.dumps(message).encode())

    root = tmp_path / "project"
    root.mkdir()
    session = tmp_path / "session.bin"
    session.write_bytes(
        framed(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}},
            }
        )
        + framed({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        + framed(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "contextls/addText",
                "params": {"kind": "text", "content": "from a file"},
            }
        )
        + framed({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
        + framed({"jsonrpc": "2.0", "method": "exit"})
    )
    env = {"CONTEXTLS_STORAGE": str(tmp_path / "ctx.sqlite3")}
    with session.open("rb") as stdin:
        result = subprocess.run(
            SERVER, stdin=stdin, capture_output=True, timeout=30, env={**os.environ, **env}
        )
    assert result.returncode == 0
    answers = {m["id"]: m for m in read_all_messages(result.stdout) if is_response(m)}
    assert sorted(answers) == [1, 2, 3]
    assert answers[2]["result"]["item"]["content"] == "from a file"


def test_names_that_are_not_utf8_are_left_out_and_named(raw: RawStdio, workspace: Path) -> None:
    """A folder holding ``bad\\xff.py``: the valid files are added, the odd name is left out
    with its reason, and exactly one answer comes (it was "internal error" after the add)."""
    odd = workspace / "odd"
    odd.mkdir()
    (odd / "good.py").write_text("x = 1\n")
    with open(os.fsencode(odd) + b"/bad\xff.py", "wb") as file:
        file.write(b"y = 2\n")
    reply = raw.request("contextls/addFiles", {"targets": [{"uri": odd.as_uri()}]})
    assert "result" in reply, reply
    assert [item["metadata"]["path"] for item in reply["result"]["items"]] == ["odd/good.py"]
    [skipped] = reply["result"]["skipped"]
    assert skipped["path"] == "odd/bad\\xff.py" and "UTF-8" in skipped["reason"], skipped
    refused = raw.request("contextls/addFile", {"uri": odd.as_uri() + "/bad%FF.py"})
    assert refused["error"]["code"] == -32602
    assert "bad\\xff.py" in refused["error"]["message"], refused
    assert status(raw)["itemCount"] == 1
    assert raw.shutdown_and_exit() == 0
