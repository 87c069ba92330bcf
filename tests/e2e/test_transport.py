"""The transport after the direct dispatcher: what goes in typed, what comes out, in order.

``contextls/*`` requests are answered by ``lsp.dispatch`` from the decoded
JSON (no pygls dispatch); the LSP lifecycle, document sync and
``prepareConversation`` still go through pygls, typed by lsprotocol. Every
message out goes through one outbox, written once per event-loop turn.
These tests drive the real server: through the awaited ``Session`` where a
client library is fine, and over raw stdio (``rawio``) to pipeline, send odd
ids, and watch the exact order of what comes back.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp

from tests.support.rpc import TIMEOUT, is_response, notification, request

from .conftest import Session
from .rawio import RawServers, RawStdio

STATUS = "contextls/didChangeStatus"
EVICT = "contextls/didEvict"
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601

# Keys a namedtuple cannot hold as they are (pygls' stock `_dict_to_object`
# renames them to _0, _1, ...): only plain dicts carry them through.
ODD_KEYS: dict[str, Any] = {
    "class": "a keyword",
    "1st": [1, {"nested-key": None}],
    "with-dash": {"def": True, "": "empty key"},
    "_private": 0.5,
    "ünïcödé": "✓",
}


@pytest.fixture
def servers(workspace: Path, storage: Path, tmp_path: Path) -> Iterator[RawServers]:
    started = RawServers(workspace, storage, tmp_path / "server.log")
    yield started
    started.close_all()


# --------------------------------------------------------------------- typing


async def test_custom_params_arrive_as_plain_dicts(session: Session) -> None:
    added = await session.call(
        "contextls/addText", content="odd metadata keys", metadata={"free": ODD_KEYS}
    )
    assert added["item"]["metadata"]["free"] == ODD_KEYS
    listed = await session.call("contextls/list")
    assert listed["items"][0]["metadata"]["free"] == ODD_KEYS

    # prepareConversation is asynchronous, so it goes through pygls'
    # structure_message/handle_message: the converter must keep dicts there too.
    messages = [
        {"role": "user", "content": "first", "ts": 1, **ODD_KEYS},
        {"role": "assistant", "content": "second", "ts": 2, "class": "kept"},
    ]
    prepared = await session.call(
        "contextls/prepareConversation", messages=messages, contextWindow=100_000
    )
    assert prepared["truncated"] is False
    assert prepared["messages"] == messages


async def test_standard_params_are_still_typed_by_lsprotocol(session: Session) -> None:
    """An incremental edit only applies if pygls got lsprotocol Range objects."""
    uri = session.uri("README.md")
    text = (session.root / "README.md").read_text()
    await session.call("contextls/addRegion", **session.region("README.md", 3, 3))
    session.notify(
        lsp.TEXT_DOCUMENT_DID_OPEN,
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text=text
            )
        ),
    )
    # "A small project for tests." -> "A tiny project for tests." (line 2, characters 2..7)
    session.notify(
        lsp.TEXT_DOCUMENT_DID_CHANGE,
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(
                        start=lsp.Position(line=2, character=2),
                        end=lsp.Position(line=2, character=7),
                    ),
                    text="tiny",
                )
            ],
        ),
    )
    await session.wait_for(
        lambda: bool(session.statuses) and session.statuses[-1]["staleCount"] == 1
    )
    listed = await session.call("contextls/list")
    assert [item["stale"] for item in listed["items"]] == [True]
    whole = await session.call("contextls/addFile", uri=uri)
    assert whole["item"]["content"] == "# Project\n\nA tiny project for tests.\n"


def test_malformed_standard_request_gets_invalid_params_naming_the_field(
    servers: RawServers, workspace: Path
) -> None:
    server = servers()
    uri = (workspace / "src" / "app.py").as_uri()
    reply = server.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": "zero", "character": 0}},
    )
    assert reply["error"]["code"] == INVALID_PARAMS, reply
    assert "textDocument/hover" in reply["error"]["message"]
    assert "$.params.position.line" in reply["error"]["message"]
    # Well-formed, the same request passes structuring and reaches pygls, which
    # has no hover feature here.
    reply = server.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
    )
    assert reply["error"]["code"] == METHOD_NOT_FOUND, reply
    # A malformed standard notification has nobody to answer: dropped, server lives.
    server.send(notification("textDocument/didOpen", {"textDocument": {"uri": 5}}))
    assert server.result("contextls/status")["itemCount"] == 0
    assert server.shutdown_and_exit() == 0


# ---------------------------------------------------------------- pipelining


def test_pipelined_burst_is_answered_in_order_and_announced_after_its_answers(
    servers: RawServers,
) -> None:
    server = servers({"maxItems": 20})
    count = 300
    ids = [1000 + n for n in range(count)]
    # Everything in one write: the server reads it as one burst (or a few).
    server.send(
        *[
            request(msg_id, "contextls/addText", {"content": f"pipelined item {n}"})
            for n, msg_id in enumerate(ids)
        ]
    )
    responses: list[dict[str, Any]] = []
    while len(responses) < count:
        message = server.read()
        if is_response(message):
            responses.append(message)
    assert [r["id"] for r in responses] == ids, "each answered once, in order"
    assert all("result" in r for r in responses), [r for r in responses if "error" in r][:3]
    final_revision = responses[-1]["result"]["status"]["revision"]
    assert [r["result"]["status"]["revision"] for r in responses] == list(
        range(final_revision - count + 1, final_revision + 1)
    )
    reported = [item["id"] for r in responses for item in r["result"]["evicted"]]
    assert len(reported) == count - 20 and len(set(reported)) == len(reported)

    # The burst's notifications follow its commit, in the same write as its answers.
    while not any(s["revision"] == final_revision for s in server.notifications(STATUS)):
        server.read()

    first = server.seen.index(responses[0])
    latest_revision = 0
    answered_evictions: set[str] = set()
    announced: list[str] = []
    statuses = 0
    reasons_since_status: list[str] = []
    for message in server.seen[first:]:
        if is_response(message):
            latest_revision = message["result"]["status"]["revision"]
            answered_evictions.update(item["id"] for item in message["result"]["evicted"])
        elif message.get("method") == EVICT:
            ids_here = [item["id"] for item in message["params"]["items"]]
            assert set(ids_here) <= answered_evictions, "announced before it was answered"
            announced.extend(ids_here)
            reason = message["params"]["reason"]
            assert reason not in reasons_since_status, "one didEvict per reason per burst"
            reasons_since_status.append(reason)
        elif message.get("method") == STATUS:
            statuses += 1
            # Pushed after the commit, which follows the answers it covers.
            assert message["params"]["revision"] == latest_revision
            reasons_since_status = []
    assert sorted(announced) == sorted(reported), "every eviction announced exactly once"
    assert statuses < count // 10, f"{statuses} status pushes for one pipelined burst"
    assert server.notifications(STATUS)[-1]["revision"] == final_revision
    assert server.result("contextls/status")["itemCount"] == 20
    assert server.shutdown_and_exit() == 0


def test_megabyte_message_round_trips(servers: RawServers) -> None:
    server = servers({"maxTokens": 10_000_000, "maxFileBytes": 10_000_000})
    line = "ligne numéro {n}: héllo wörld ✓ 🎉 and some ascii to tokenize\n"
    content = "".join(line.format(n=n) for n in range(17_000))
    assert len(content.encode()) > 1_100_000 > len(content)  # bytes, not characters
    big = server.new_id()
    after = server.new_id()
    server.send(
        request(big, "contextls/addText", {"content": content, "kind": "text"}),
        request(after, "contextls/status", {}),  # framed right behind the big body
    )
    answers = {}
    while len(answers) < 2:
        answer = server.next_response()
        answers[answer["id"]] = answer
    assert answers[big]["result"]["item"]["content"] == content
    # The text is counted off the loop: the status behind it did not wait for it.
    assert answers[after]["result"]["itemCount"] in (0, 1)
    listed = server.result("contextls/list")
    assert [item["content"] for item in listed["items"]] == [content]
    assert server.shutdown_and_exit() == 0


# ------------------------------------------------------------ ids, shutdown


def test_ids_that_are_not_numbers_or_strings_are_invalid_requests(servers: RawServers) -> None:
    server = servers()
    for bad_id in (True, False, {"id": 1}, [7]):
        server.send(request(bad_id, "contextls/addText", {"content": f"with id {bad_id!r}"}))
        reply = server.read()
        while not is_response(reply):
            reply = server.read()
        assert reply["error"]["code"] == INVALID_REQUEST, (bad_id, reply)
        assert reply["id"] is None, reply
    # The handler never ran: nothing was added.
    status = server.result("contextls/status", {})
    assert (status["itemCount"], status["revision"]) == (0, 0)
    assert server.shutdown_and_exit() == 0


def test_requests_after_shutdown_are_refused_and_exit_ends_with_0(
    servers: RawServers,
) -> None:
    server = servers()
    assert server.result("contextls/addText", {"content": "before shutdown"})["item"]["id"] == (
        "ctx-1"
    )
    reply = server.request("shutdown")
    assert reply["result"] is None, reply
    for method, params in (
        ("contextls/status", {}),
        ("contextls/addText", {"content": "after shutdown"}),
        ("contextls/list", None),
    ):
        reply = server.request(method, params)
        assert reply["error"]["code"] == INVALID_REQUEST, (method, reply)
        assert "shutting down" in reply["error"]["message"]
    server.send(notification("exit"))
    assert server.wait() == 0

    again = servers()
    listed = again.result("contextls/list")
    assert [item["content"] for item in listed["items"]] == ["before shutdown"]


def wait_until_blocked_writing(pid: int, timeout: float = 5.0) -> None:
    """Until the process sleeps in a pipe write (Linux /proc), at most ``timeout``."""
    wchan = Path(f"/proc/{pid}/wchan")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if "pipe_write" in wchan.read_text():
                return
        except OSError:
            pass
        time.sleep(0.01)


@pytest.mark.parametrize(
    "unbuffered",
    [
        pytest.param(None, id="buffered-stdout"),
        # sys.stdout.buffer is then a raw FileIO, whose write() may write part.
        pytest.param("1", id="PYTHONUNBUFFERED"),
    ],
)
def test_sigterm_while_blocked_writing_keeps_the_output_well_formed(
    servers: RawServers, unbuffered: str | None
) -> None:
    server = servers({"maxItems": 1000}, env={"PYTHONUNBUFFERED": unbuffered})
    server.hold_output()  # the answers to the burst fill the pipe and the server blocks
    ids = [server.new_id() for _ in range(400)]
    server.send(
        *[
            request(msg_id, "contextls/addText", {"content": f"blocked note {n}"})
            for n, msg_id in enumerate(ids)
        ]
    )
    wait_until_blocked_writing(server.process.pid)
    server.terminate()
    server.release_output()
    messages = server.read_until_eof()  # fails on a truncated or garbled frame
    assert server.wait() == 0
    answered = [m for m in messages if is_response(m) and m["id"] in ids]
    assert answered, "the burst was answered before the signal was handled"
    assert [m["id"] for m in answered] == ids[: len(answered)]
    # The burst is committed on the way out, then announced.
    assert messages[-1].get("method") == STATUS, messages[-1]
    assert messages[-1]["params"]["revision"] == answered[-1]["result"]["status"]["revision"]
    # and what was answered is kept
    again = servers({"maxItems": 1000})
    contents = [item["content"] for item in again.result("contextls/list")["items"]]
    assert contents == [f"blocked note {n}" for n in range(len(answered))]


def test_requests_routed_through_pygls_after_shutdown_are_refused(servers: RawServers) -> None:
    server: RawStdio = servers()
    assert server.request("shutdown")["result"] is None
    reply = server.request(
        "contextls/prepareConversation",
        {"messages": [{"role": "user", "content": "hi"}], "contextWindow": 1000},
        timeout=TIMEOUT,
    )
    assert reply["error"]["code"] == INVALID_REQUEST, reply


def test_a_request_cancelled_in_the_same_write_gets_one_answer(servers: RawServers) -> None:
    """The cancel arrives before the request's task has run a step: it is still answered,
    once, as cancelled, and nothing else is."""
    server = servers()
    long_text = "words to count " * 10_000  # counted off the loop: answered by a task
    asked = server.new_id()
    after = server.new_id()
    server.send(
        request(asked, "contextls/countTokens", {"text": long_text}),
        notification("$/cancelRequest", {"id": asked}),
        request(after, "contextls/status", {}),
    )
    answers = {}
    while len(answers) < 2:
        answer = server.next_response()
        answers[answer["id"]] = answer
    assert answers[asked]["error"]["code"] == -32800, answers
    assert "result" in answers[after]
    assert "result" in server.request("contextls/status")
    assert [m for m in server.seen if m.get("id") == asked] == [answers[asked]]
