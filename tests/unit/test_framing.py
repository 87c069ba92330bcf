"""Content-Length framing (contextls.lsp.outbox): the outbox and the frame reader.

The outbox is the server's only way out: everything queued while the event
loop is busy leaves in one write when the loop next turns, in order, and
work deferred with ``defer`` runs once right after that write. The reader
hands each framed body on, whatever the chunks the bytes arrive in, and
answers a frame it cannot size with -32700 without stopping.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from typing import Any

import pytest

from contextls.lsp.outbox import FrameReader, Outbox
from contextls.protocol import CountTokensResult, ErrorCode
from contextls.protocol.framing import MAX_BODY_BYTES, MAX_HEADER_LINE, frame

COUNTED = {
    "tokens": 3,
    "encoding": "o200k_base",
    "model": "",
    "exact": True,
    "label": "exact",
    "counts": [],
    "files": [],
    "skipped": [],
    "refused": [],
}
"""A ``CountTokensResult(tokens=3, encoding="o200k_base")`` as the wire carries it."""


class Sink:
    """Where the outbox writes: records each call."""

    def __init__(self) -> None:
        self.calls: list[bytes] = []

    def __call__(self, data: bytes) -> None:
        self.calls.append(data)

    @property
    def messages(self) -> list[Any]:
        return parse_frames(b"".join(self.calls))


def parse_frames(data: bytes) -> list[Any]:
    """Split a byte stream into its JSON bodies, checking each Content-Length."""
    messages = []
    while data:
        header, separator, rest = data.partition(b"\r\n\r\n")
        assert separator, f"no header end in {data[:80]!r}"
        name, _, value = header.decode("ascii").partition(":")
        assert name == "Content-Length", header
        length = int(value)
        assert len(rest) >= length, "a frame shorter than its Content-Length"
        messages.append(json.loads(rest[:length]))
        data = rest[length:]
    return messages


async def next_turn() -> None:
    """Let the event loop run what was scheduled with call_soon (the outbox's flush)."""
    await asyncio.sleep(0)


# ------------------------------------------------------------------ outbox


def test_frame_counts_bytes_not_characters() -> None:
    body = json.dumps({"text": "é✓🎉"}, ensure_ascii=False).encode()
    assert frame(body) == b"Content-Length: %d\r\n\r\n" % len(body) + body
    assert len(body) > len(body.decode())


async def test_everything_sent_in_one_turn_leaves_in_one_write_in_order() -> None:
    sink = Sink()
    outbox = Outbox()
    outbox.attach(sink)
    pygls_frame = frame(b'{"jsonrpc":"2.0","id":1,"result":null}')
    outbox.write(pygls_frame)  # pygls hands over whole frames
    outbox.notify("contextls/didChangeStatus", {"revision": 1})
    outbox.respond(2, CountTokensResult(tokens=3, encoding="o200k_base"))
    outbox.error(3, -32602, "bad params", {"path": "$.x"})
    outbox.error(None, -32700, "parse error")
    outbox.write(frame(b'{"jsonrpc":"2.0","method":"window/showMessage","params":{}}'))
    assert sink.calls == [], "nothing is written before the loop turns"

    await next_turn()
    assert len(sink.calls) == 1
    assert sink.calls[0].startswith(pygls_frame)
    assert sink.messages == [
        {"jsonrpc": "2.0", "id": 1, "result": None},
        {"jsonrpc": "2.0", "method": "contextls/didChangeStatus", "params": {"revision": 1}},
        {"jsonrpc": "2.0", "id": 2, "result": COUNTED},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "error": {"code": -32602, "message": "bad params", "data": {"path": "$.x"}},
        },
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}},
        {"jsonrpc": "2.0", "method": "window/showMessage", "params": {}},
    ]
    await next_turn()
    assert len(sink.calls) == 1, "an empty outbox writes nothing"


@pytest.mark.parametrize("msg_id", [0, -1, 2**53, "abc", 'é"\\'])
def test_a_response_carries_its_id_as_sent(msg_id: int | str) -> None:
    sink = Sink()
    outbox = Outbox()
    outbox.attach(sink)
    outbox.respond(msg_id, CountTokensResult(tokens=3, encoding="o200k_base"))
    assert sink.messages == [{"jsonrpc": "2.0", "id": msg_id, "result": COUNTED}]


async def test_each_turn_gets_its_own_write() -> None:
    sink = Sink()
    outbox = Outbox()
    outbox.attach(sink)
    outbox.respond(1, "first")
    await next_turn()
    outbox.respond(2, "second")
    outbox.respond(3, "third")
    await next_turn()
    assert [parse_frames(call) for call in sink.calls] == [
        [{"jsonrpc": "2.0", "id": 1, "result": "first"}],
        [
            {"jsonrpc": "2.0", "id": 2, "result": "second"},
            {"jsonrpc": "2.0", "id": 3, "result": "third"},
        ],
    ]


async def test_held_messages_wait_for_the_holders_flush_and_leave_in_one_write() -> None:
    sink = Sink()
    outbox = Outbox()
    outbox.attach(sink)
    outbox.hold()
    outbox.respond(1, "first")
    outbox.notify("n", {})
    await next_turn()
    assert sink.calls == []  # holding: no write of its own in the next turn
    outbox.flush()
    assert [parse_frames(call) for call in sink.calls] == [
        [
            {"jsonrpc": "2.0", "id": 1, "result": "first"},
            {"jsonrpc": "2.0", "method": "n", "params": {}},
        ]
    ]
    outbox.respond(2, "after")  # the flush ended the hold
    await next_turn()
    assert len(sink.calls) == 2


async def test_frames_queued_before_attach_go_out_first() -> None:
    outbox = Outbox()
    outbox.notify("early", 1)
    await next_turn()  # the flush finds no sink: nothing is lost
    outbox.notify("early", 2)
    sink = Sink()
    outbox.attach(sink)
    outbox.notify("late", 3)
    await next_turn()
    assert [(m["method"], m["params"]) for m in sink.messages] == [
        ("early", 1),
        ("early", 2),
        ("late", 3),
    ]


def test_without_a_running_loop_each_message_is_written_at_once() -> None:
    sink = Sink()
    outbox = Outbox()
    outbox.attach(sink)
    outbox.respond(1, None)
    outbox.notify("n", None)
    assert len(sink.calls) == 2
    assert [m.get("id", m.get("method")) for m in sink.messages] == [1, "n"]


async def test_close_writes_what_is_queued() -> None:
    sink = Sink()
    outbox = Outbox()
    outbox.attach(sink)
    outbox.respond(1, "last words")
    outbox.close()
    assert [m["result"] for m in sink.messages] == ["last words"]
    await next_turn()
    assert len(sink.calls) == 1, "nothing is written twice"


# ------------------------------------------------------------- FrameReader


def read_all(chunks: list[bytes]) -> tuple[list[bytes], list[Any], FrameReader]:
    """Feed ``chunks`` one by one; the bodies handed on, what the outbox sent, the reader."""
    sink = Sink()
    outbox = Outbox()
    outbox.attach(sink)
    bodies: list[bytes] = []
    reader = FrameReader(bodies.append, outbox)
    for chunk in chunks:
        reader.feed(chunk)
    return bodies, sink.messages, reader


def body(n: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "m", "params": {"é": "✓" * n}}).encode(
        "utf-8"
    )


def test_frames_split_and_merged_arbitrarily_are_all_read() -> None:
    stream = b"".join(frame(body(n)) for n in range(1, 6))
    cuts = [0, 1, 15, 16, 17, 18, 40, 41, len(stream) - 3, len(stream)]
    chunks = [stream[a:b] for a, b in itertools.pairwise(cuts)]
    bodies, sent, _ = read_all(chunks)
    assert bodies == [body(n) for n in range(1, 6)]
    assert sent == []


def test_one_byte_at_a_time() -> None:
    stream = frame(body(1)) + frame(body(2))
    bodies, _, _ = read_all([stream[i : i + 1] for i in range(len(stream))])
    assert bodies == [body(1), body(2)]


def test_all_frames_in_one_chunk() -> None:
    bodies, _, _ = read_all([b"".join(frame(body(n)) for n in range(50))])
    assert bodies == [body(n) for n in range(50)]


def test_header_names_are_case_insensitive_and_other_headers_ignored() -> None:
    stream = (
        b"content-length: %d\r\n" % len(body(1))
        + b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
        + body(1)
        + b"Content-Type: x\r\nCONTENT-LENGTH:%d\n\n" % len(body(2))
        + body(2)
    )
    bodies, sent, _ = read_all([stream])
    assert bodies == [body(1), body(2)]
    assert sent == []


@pytest.mark.parametrize(
    "header",
    [
        b"Content-Length: abc\r\n\r\n",
        b"Content-Length: -5\r\n\r\n",
        b"Content-Length: %d\r\n\r\n" % (MAX_BODY_BYTES + 1),
        b"Content-Type: application/json\r\n\r\n",  # no length at all
    ],
    ids=["not-a-number", "negative", "too-big", "missing"],
)
def test_a_frame_without_a_usable_length_gets_a_parse_error_and_reading_goes_on(
    header: bytes,
) -> None:
    stream = frame(body(1)) + header + frame(body(2))
    bodies, sent, _ = read_all([stream])
    assert bodies == [body(1), body(2)]
    assert sent == [
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "parse error: missing or bad Content-Length"},
        }
    ]


def test_an_empty_body_is_handed_on() -> None:
    bodies, sent, _ = read_all([b"Content-Length: 0\r\n\r\n" + frame(body(1))])
    assert bodies == [b"", body(1)]
    assert sent == []


def test_end_of_input_between_or_inside_headers_is_not_inside_a_message() -> None:
    bodies, sent, reader = read_all([frame(body(1)) + b"Content-Len"])
    assert bodies == [body(1)]
    assert sent == []
    assert not reader.inside_a_message


def test_end_of_input_inside_a_body_is_inside_a_message() -> None:
    bodies, _, reader = read_all([frame(body(1))[:-3]])
    assert bodies == []
    assert reader.inside_a_message


def test_a_failing_handler_does_not_stop_the_frames_after_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    handled: list[bytes] = []

    def handle(raw: bytes) -> None:
        handled.append(raw)
        if raw == body(1):
            raise RuntimeError("boom")

    outbox = Outbox()
    outbox.attach(Sink())
    reader = FrameReader(handle, outbox)
    with caplog.at_level(logging.ERROR):
        reader.feed(frame(body(1)) + frame(body(2)))
    assert handled == [body(1), body(2)]
    assert "handling a message failed" in caplog.text


def test_an_exit_raised_by_a_handler_goes_through() -> None:
    def handle(raw: bytes) -> None:
        raise SystemExit(0)

    outbox = Outbox()
    outbox.attach(Sink())
    with pytest.raises(SystemExit):
        FrameReader(handle, outbox).feed(frame(body(1)))


def test_a_large_body_in_many_chunks_is_read_whole() -> None:
    big = json.dumps({"jsonrpc": "2.0", "method": "m", "params": "x" * 1_100_000}).encode()
    stream = frame(big) + frame(body(1))
    chunks = [stream[i : i + 65536] for i in range(0, len(stream), 65536)]
    bodies, _, reader = read_all(chunks)
    assert bodies == [big, body(1)]
    assert not reader.inside_a_message


def test_the_end_of_a_turn_commits_before_anything_is_written() -> None:
    sink = Sink()
    order: list[str] = []

    def end_of_turn() -> None:
        outbox.hold()
        order.append(f"commit with {len(sink.calls)} writes done")
        outbox.notify("contextls/didChangeStatus", {"revision": 2})  # joins this write
        outbox.flush(None)

    outbox = Outbox(end_of_turn=end_of_turn)
    outbox.attach(sink)
    outbox.respond(1, {"ok": True}, waits_for_commit=True)  # no loop: the turn ends now
    assert order == ["commit with 0 writes done"]
    assert len(sink.calls) == 1
    assert sink.messages == [
        {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}},
        {"jsonrpc": "2.0", "method": "contextls/didChangeStatus", "params": {"revision": 2}},
    ]


def test_a_failed_commit_turns_answers_that_report_changes_into_the_storage_error() -> None:
    sink = Sink()
    outbox = Outbox()
    outbox.attach(sink)
    outbox.hold()
    outbox.respond(1, {"item": "ctx-1"}, waits_for_commit=True)
    outbox.respond("two", {"items": []})  # a read: it stands
    outbox.respond(3, {"item": "ctx-2"}, waits_for_commit=True)
    outbox.flush("the disk is full; nothing changed")
    storage = {"code": int(ErrorCode.STORAGE), "message": "the disk is full; nothing changed"}
    assert sink.messages == [
        {"jsonrpc": "2.0", "id": 1, "error": storage},
        {"jsonrpc": "2.0", "id": "two", "result": {"items": []}},
        {"jsonrpc": "2.0", "id": 3, "error": storage},
    ]
    # The next flush starts clean: a later answer is not rewritten.
    outbox.respond(4, {"item": "ctx-3"}, waits_for_commit=True)
    outbox.flush(None)
    assert sink.messages[-1] == {"jsonrpc": "2.0", "id": 4, "result": {"item": "ctx-3"}}


def test_a_200_mb_header_line_is_refused_in_linear_time_and_bounded_memory() -> None:
    """The reader never holds more than one header line's bound and one chunk, so each
    feed scans a bounded buffer: the work is linear in what arrives (the speed itself is
    timed in tests/bench/bench_bounds.py)."""
    sink = Sink()
    outbox = Outbox()
    outbox.attach(sink)
    bodies: list[bytes] = []
    reader = FrameReader(bodies.append, outbox)
    chunk = b"x" * 65536
    biggest = 0
    for _ in range(200 * 1024 * 1024 // len(chunk)):
        reader.feed(chunk)
        biggest = max(biggest, reader.buffered)
    reader.feed(b"\r\n" + frame(body(1)))  # the line ends; a good frame follows
    assert biggest <= MAX_HEADER_LINE + len(chunk)
    errors = [m for m in sink.messages if "error" in m]
    assert len(errors) == 1 and "header line longer" in errors[0]["error"]["message"]
    assert bodies == [body(1)], "the stream goes on after the over-long line"


def test_a_long_header_line_in_one_chunk_is_refused_and_the_next_frame_read() -> None:
    bodies, messages, _ = read_all([b"X-Junk: " + b"y" * 20000 + b"\r\n" + frame(body(2))])
    assert any("header line longer" in m["error"]["message"] for m in messages if "error" in m)
    assert bodies == [body(2)]
