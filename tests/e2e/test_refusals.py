"""Requests that could freeze, escape or break a server get one clear, quick answer.

Each case was found by an independent probe: a FIFO or a device
in the folder, a symlink loop, NUL and relative URIs, bytes that are not
UTF-8, params nested a thousand deep, a null method, ids that are not
integers or strings, a second ``initialize``, and ``/`` as a folder. Every
answer must come fast, name no Python internals, and change nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextls.protocol import ErrorCode
from contextls.protocol.framing import frame

from .rawio import RawServers, RawStdio

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


@pytest.fixture
def server(workspace: Path, storage: Path) -> Iterator[RawStdio]:
    started = RawServers(workspace, storage)
    one = started()
    one.warm_up()
    yield one
    started.close_all()


def quick_refusal(server: RawStdio, method: str, params: Any) -> dict[str, Any]:
    """The error a request gets (never a hang: a FIFO opened would block for ever), with no
    traceback; the server answers the next request. How fast: tests/bench/bench_bounds.py."""
    reply = server.request(method, params)
    assert "error" in reply, reply
    data = reply["error"].get("data")
    assert data is None or set(data) == {"field", "rule", "bound", "expected"}, reply
    assert "Traceback" not in reply["error"]["message"]
    status = server.request("contextls/status")
    assert "result" in status, status
    return reply["error"]  # type: ignore[no-any-return]


def unchanged(server: RawStdio) -> None:
    status = server.result("contextls/status")
    assert status["itemCount"] == 0 and status["revision"] == 0


def test_a_fifo_is_refused_at_once(server: RawStdio, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    error = quick_refusal(server, "contextls/addFile", {"uri": (workspace / "pipe").as_uri()})
    assert error["code"] == ErrorCode.FILE_NOT_FOUND
    assert "named pipe" in error["message"]
    unchanged(server)


def test_a_device_is_refused_at_once(server: RawStdio, workspace: Path) -> None:
    device = workspace / "zero"
    try:
        os.mknod(device, 0o600 | 0o020000, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("mknod needs root; the FIFO case covers the same path")
    error = quick_refusal(server, "contextls/addFile", {"uri": device.as_uri()})
    assert error["code"] == ErrorCode.FILE_NOT_FOUND
    assert "character device" in error["message"]
    unchanged(server)


def test_a_symlink_loop_is_a_clear_refusal(server: RawStdio, workspace: Path) -> None:
    os.symlink(workspace / "loop2", workspace / "loop1")
    os.symlink(workspace / "loop1", workspace / "loop2")
    error = quick_refusal(server, "contextls/addFile", {"uri": (workspace / "loop1").as_uri()})
    assert error["code"] == ErrorCode.FILE_NOT_FOUND
    assert "symbolic link loop" in error["message"]
    unchanged(server)


@pytest.mark.parametrize(
    ("uri", "words"),
    [("file:ws/a.py", "relative file URI"), ("file:///tmp/a\u0000.py", "NUL")],
)
def test_relative_and_nul_uris_are_invalid_params(server: RawStdio, uri: str, words: str) -> None:
    error = quick_refusal(server, "contextls/addFile", {"uri": uri})
    assert error["code"] == INVALID_PARAMS and words in error["message"]
    assert "$.uri" in error["message"]
    unchanged(server)


def test_bytes_that_are_not_utf8_get_a_parse_error_with_the_id(server: RawStdio) -> None:
    body = b'{"jsonrpc":"2.0","id":71,"method":"contextls/addText","params":{"content":"a\xff"}}'
    server.write(frame(body))
    reply = server.reply_to(71)
    assert reply["error"]["code"] == PARSE_ERROR and "UTF-8" in reply["error"]["message"]
    unchanged(server)


@pytest.mark.parametrize("depth", [40, 975, 1000, 5000])
def test_deep_params_are_refused_before_any_change(server: RawStdio, depth: int) -> None:
    nested = b"[" * depth + b"]" * depth
    body = (
        b'{"jsonrpc":"2.0","id":72,"method":"contextls/addText",'
        b'"params":{"content":"x","metadata":{"deep":' + nested + b"}}}"
    )
    server.write(frame(body))
    reply = server.reply_to(72)
    assert reply["error"]["code"] in (PARSE_ERROR, INVALID_PARAMS), reply
    unchanged(server)
    # The store stays readable: a search touching nothing deep still works.
    assert server.result("contextls/search", {"query": "x"})["hits"] == []


def test_a_null_method_is_an_invalid_request(server: RawStdio) -> None:
    server.send({"jsonrpc": "2.0", "id": 73, "method": None})
    reply = server.reply_to(73)
    assert reply["error"]["code"] == INVALID_REQUEST
    assert "data" not in reply["error"]


@pytest.mark.parametrize("bad_id", ["true", "1.5", "1e300", "[1]", "{}"])
def test_prepare_conversation_refuses_bad_ids_like_every_request(
    server: RawStdio, bad_id: str
) -> None:
    for method, params in (
        ("contextls/prepareConversation", '{"messages":[],"contextWindow":100}'),
        ("contextls/status", "{}"),
    ):
        body = (f'{{"jsonrpc":"2.0","id":{bad_id},"method":"{method}","params":{params}}}').encode()
        server.write(frame(body))
        reply = server.read()
        assert reply.get("id") is None and reply["error"]["code"] == INVALID_REQUEST, reply


def test_a_second_initialize_is_refused_and_cannot_widen_the_folders(
    server: RawStdio, workspace: Path
) -> None:
    reply = server.request(
        "initialize", {"processId": None, "rootUri": "file:///", "capabilities": {}}
    )
    assert reply["error"]["code"] == INVALID_REQUEST
    error = quick_refusal(server, "contextls/addFile", {"uri": "file:///etc/hostname"})
    assert error["code"] == ErrorCode.OUTSIDE_WORKSPACE


def test_the_root_directory_is_not_accepted_as_a_folder(tmp_path: Path) -> None:
    started = RawServers(Path("/"), tmp_path / "db.sqlite3")
    try:
        server = started()
        warnings = [
            m["params"]["message"] for m in server.seen if m.get("method") == "window/showMessage"
        ]
        error = server.request("contextls/addFile", {"uri": "file:///etc/hostname"})["error"]
        while not warnings:
            message = server.read()
            if message.get("method") == "window/showMessage":
                warnings.append(message["params"]["message"])
        assert any("too wide" in warning for warning in warnings)
        assert error["code"] == ErrorCode.NO_WORKSPACE
    finally:
        started.close_all()


def test_a_pipelined_mix_of_bad_messages_gets_one_answer_each(server: RawStdio) -> None:
    bad = [
        b'{"jsonrpc":"2.0","id":81,"method":"contextls/addText","params":{"content":"\xfe"}}',
        b'{"jsonrpc":"2.0","id":82,"method":null}',
        b'{"jsonrpc":"2.0","id":83,"method":"contextls/addFile","params":{"uri":"file:x"}}',
        b'{"jsonrpc":"2.0","id":84,"method":"contextls/status"}',
    ]
    server.write(b"".join(frame(b) for b in bad))
    answers = {}
    while len(answers) < 4:
        message = server.read()
        if "id" in message and "method" not in message:
            assert message["id"] not in answers, "two answers to one id"
            answers[message["id"]] = message
    assert set(answers) == {81, 82, 83, 84}
    assert "result" in answers[84]


def test_a_range_past_the_file_is_refused_even_when_the_whole_file_is_in(
    server: RawStdio, workspace: Path
) -> None:
    (workspace / "whole.py").write_text("one\ntwo\n")
    uri = (workspace / "whole.py").as_uri()
    server.result("contextls/addFile", {"uri": uri})
    before = server.result("contextls/status")["revision"]
    far = {"line": 1_000_000_000, "character": 0}
    error = quick_refusal(
        server, "contextls/addRegion", {"uri": uri, "range": {"start": far, "end": far}}
    )
    assert error["code"] == ErrorCode.INVALID_RANGE
    assert server.result("contextls/status")["revision"] == before


def test_invalid_params_name_the_field_and_the_rule_as_data(server: RawStdio) -> None:
    """A client says a refusal in its own words from data, never by reading the message."""
    for params, data in [
        (
            {"settings": {"maxTokens": 0}},
            {"field": "$.settings.maxTokens", "rule": "minimum", "bound": 1, "expected": "int"},
        ),
        (
            {"settings": {"maxTokns": 10}},
            {
                "field": "$.settings.maxTokns",
                "rule": "unknownField",
                "bound": None,
                "expected": None,
            },
        ),
        (
            {"settings": {"budgetCeiling": 100}},
            {
                "field": "$.settings.budgetCeiling",
                "rule": "invalid",
                "bound": None,
                "expected": None,
            },
        ),
    ]:
        error = server.request("contextls/configure", params)["error"]
        assert error["code"] == INVALID_PARAMS and error["data"] == data, error
    unchanged(server)
