"""Content-Length framing: reading frames in, and the outbox that writes them out.

The outbox is the one way out of the server, for pygls' own messages (it is
the protocol's writer) and for ours. It joins everything sent while the event
loop is busy and writes it at once: at the end of the turn that read the
requests (the transport holds the outbox while it handles a read), or in the
next turn for what is sent from elsewhere (a task, a timer). A burst of
pipelined requests is answered in one write. Order is kept.

What a turn produced leaves at the end of the turn (``end_of_turn``, the
server's: it commits first, see ``ContextServer.end_of_turn``). ``flush`` is
told whether that commit failed: then every answer that waits for it is replaced
by the storage error, so no client is told of a change that was not saved.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import msgspec
from lsprotocol.types import ErrorCodes

from contextls.protocol import ErrorCode
from contextls.protocol.framing import FrameParser, frame

log = logging.getLogger(__name__)


_encoder = msgspec.json.Encoder()


class Outbox:
    def __init__(self, end_of_turn: Callable[[], None] | None = None) -> None:
        """``end_of_turn``: what ends a turn that queued messages (default: ``flush``)."""
        self._pending: list[bytes] = []
        self._scheduled = False
        self._sink: Callable[[bytes], object] | None = None
        self._held = False
        self._waiting: list[tuple[int, Any]] = []
        """(index in ``_pending``, id) of answers that wait for the commit."""
        self._end_of_turn = end_of_turn or self.flush

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
            self._end_of_turn()
            return
        self._scheduled = True
        loop.call_soon(self._end_of_turn)

    def close(self) -> None:
        self.flush()

    def send(self, message: Any) -> None:
        """Encode a JSON-RPC message (builtins and msgspec Structs) and queue it."""
        self.write(frame(_encoder.encode(message)))

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def respond(self, msg_id: Any, result: Any, waits_for_commit: bool = False) -> None:
        """Queue an answer; ``waits_for_commit``: it tells of changes not committed yet, and
        leaves only if their commit succeeds."""
        if waits_for_commit:
            self._waiting.append((len(self._pending), msg_id))
        if type(msg_id) is not int:
            self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})
            return
        # The usual case, spliced rather than encoded through a dict: a third
        # less time for a typical answer.
        body = b'{"jsonrpc":"2.0","id":%d,"result":%b}' % (msg_id, _encoder.encode(result))
        self.write(frame(body))

    def error(self, msg_id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.send({"jsonrpc": "2.0", "id": msg_id, "error": error})

    def flush(self, failed_commit: str | None = None) -> None:
        """Write everything queued, in order; ``failed_commit``: why the commit the
        waiting answers report failed (they become the storage error)."""
        if self._sink is None:
            self._scheduled = self._held = False
            return
        if failed_commit is not None:
            error = {"code": int(ErrorCode.STORAGE), "message": failed_commit}
            for index, msg_id in self._waiting:
                self._pending[index] = frame(
                    _encoder.encode({"jsonrpc": "2.0", "id": msg_id, "error": error})
                )
        self._waiting.clear()
        self._scheduled = self._held = False
        if self._pending:
            data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
            self._pending.clear()
            self._sink(data)


class FrameReader(FrameParser):
    """The shared ``FrameParser``, answering what it cannot frame with a parse error.

    The transport queues every complete frame of a read and handles them in order,
    writing the answers of each loop turn at its end (see ``transport.FrameProtocol``).
    """

    def __init__(self, handle: Callable[[bytes], None], outbox: Outbox) -> None:
        def on_body(body: bytes) -> None:
            try:
                handle(body)
            except Exception:  # the dispatcher answers every failure; the rest goes on
                log.exception("handling a message failed")

        def on_error(problem: str) -> None:
            outbox.error(None, ErrorCodes.ParseError, f"parse error: {problem}")

        super().__init__(on_body, on_error)
