"""Content-Length framing: reading frames in, and the outbox that writes them out.

The outbox is the one way out of the server, for pygls' own messages (it is
the protocol's writer) and for ours. It joins everything sent while the event
loop is busy and writes it at once: at the end of the turn that read the
requests (the transport holds the outbox while it handles a read), or in the
next turn for what is sent from elsewhere (a task, a timer). A burst of
pipelined requests is answered in one write. Order is kept.

Before it writes, the outbox passes its ``gate``: the service commits what
the answers report (``ContextService.commit``). If that fails, every answer
that reported a change is replaced by the storage error, so no client is
told of a change that was not saved.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import msgspec
from lsprotocol.types import ErrorCodes

from contextls.protocol import ErrorCode

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 256 * 1024 * 1024
MAX_HEADER_LINE = 8 * 1024
"""A header line longer than this is refused (and skipped to its end) without being kept."""

_encoder = msgspec.json.Encoder()


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


class Outbox:
    def __init__(self) -> None:
        self._pending: list[bytes] = []
        self._scheduled = False
        self._sink: Callable[[bytes], object] | None = None
        self._held = False
        self._reporting: list[tuple[int, Any]] = []
        """(index in ``_pending``, id) of answers that report an uncommitted change."""
        self.gate: Callable[[], str | None] | None = None
        """Commits what the queued answers report; returns why it failed, or None."""

    def attach(self, sink: Callable[[bytes], object]) -> None:
        """Where frames go (stdout, a socket); anything already queued goes first."""
        self._sink = sink
        self.flush()

    def hold(self) -> None:
        """Queue without scheduling a write: the caller flushes at the end of its turn.

        The transport holds while it handles what one read brought, so the
        answers leave in the same loop turn instead of the next one.
        """
        self._held = True

    # pygls' Writer protocol: it hands over whole frames.
    def write(self, data: bytes) -> None:
        self._pending.append(data)
        self._schedule()

    def _schedule(self) -> None:
        if self._scheduled or self._held:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a script, a test): write now
            self.flush()
            return
        self._scheduled = True
        loop.call_soon(self.flush)

    def close(self) -> None:
        self.flush()

    def send(self, message: Any) -> None:
        """Encode a JSON-RPC message (builtins and msgspec Structs) and queue it."""
        self.write(frame(_encoder.encode(message)))

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def respond(self, msg_id: Any, result: Any, reports_change: bool = False) -> None:
        """Queue an answer; ``reports_change``: it must not leave unless the gate commits."""
        if reports_change:
            self._reporting.append((len(self._pending), msg_id))
        if type(msg_id) is not int:
            self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})
            return
        # The usual case, spliced rather than encoded through a dict: a third
        # less time for a typical answer.
        body = b'{"jsonrpc":"2.0","id":%d,"result":%b}' % (msg_id, _encoder.encode(result))
        self.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))

    def error(self, msg_id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.send({"jsonrpc": "2.0", "id": msg_id, "error": error})

    def flush(self) -> None:
        if self._sink is None:
            self._scheduled = self._held = False
            return
        if self.gate is not None:
            self._held = True  # what the gate sends (notifications) joins this write
            failure = self.gate()
            if failure is not None:
                for index, msg_id in self._reporting:
                    self._pending[index] = frame(
                        _encoder.encode(
                            {
                                "jsonrpc": "2.0",
                                "id": msg_id,
                                "error": {"code": int(ErrorCode.STORAGE), "message": failure},
                            }
                        )
                    )
        self._reporting.clear()
        self._scheduled = self._held = False
        if self._pending:
            data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
            self._pending.clear()
            self._sink(data)


class FrameReader:
    """Content-Length frames out of a byte stream that arrives in chunks of any size.

    Push-based, so the transport can hand every complete frame of a chunk to
    ``handle`` in the loop turn that read it, and write all their answers at
    the end of that same turn (see ``transport.FrameProtocol``).
    """

    def __init__(self, handle: Callable[[bytes], None], outbox: Outbox) -> None:
        self._handle = handle
        self._outbox = outbox
        self._buffer = bytearray()
        self._length: int | None = None
        """Of the body being read; None while reading headers."""
        self._header_length: int | None = None
        self._header_bad = False
        self._scanned = 0
        """How much of the buffer is known to hold no newline (each byte is scanned once)."""
        self._skipping = False
        """Dropping an over-long header line until its newline."""

    @property
    def inside_a_message(self) -> bool:
        """True when the input so far ends inside a frame's body."""
        return self._length is not None

    def feed(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        start = 0
        try:
            while True:
                length = self._length
                if length is None:
                    end = buffer.find(b"\n", max(start, self._scanned))
                    if end < 0:
                        self._scanned = len(buffer)
                        if len(buffer) - start > MAX_HEADER_LINE:
                            self._refuse_long_header()
                            start = self._scanned = len(buffer)
                        break
                    self._scanned = 0
                    line = bytes(buffer[start : end + 1])
                    start = end + 1
                    if self._skipping:
                        self._skipping = False  # the end of the over-long line
                    elif len(line) > MAX_HEADER_LINE:
                        self._refuse_long_header()
                        self._skipping = False
                    else:
                        self._header_line(line)
                    continue
                if len(buffer) - start < length:
                    break
                body = bytes(buffer[start : start + length])
                start += length
                self._length = None
                try:
                    self._handle(body)
                except Exception:  # the dispatcher answers every failure; the rest goes on
                    log.exception("handling a message failed")
        finally:
            del buffer[:start]
            self._scanned = max(0, self._scanned - start)

    def _refuse_long_header(self) -> None:
        """Say so once, and drop the line up to its newline (the frame it began is lost)."""
        if not self._skipping:
            self._skipping = True
            self._header_length, self._header_bad = None, False
            self._outbox.error(
                None,
                ErrorCodes.ParseError,
                f"parse error: a header line longer than {MAX_HEADER_LINE:,} bytes; "
                "skipped to its end",
            )

    def _header_line(self, line: bytes) -> None:
        if line not in (b"\r\n", b"\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                try:
                    self._header_length = int(value.strip())
                    self._header_bad = False
                except ValueError:
                    self._header_bad = True
            return
        length, self._header_length = self._header_length, None
        bad, self._header_bad = self._header_bad, False
        if bad or length is None or not 0 <= length <= MAX_BODY_BYTES:
            self._outbox.error(
                None, ErrorCodes.ParseError, "parse error: missing or bad Content-Length"
            )
            return
        self._length = length
