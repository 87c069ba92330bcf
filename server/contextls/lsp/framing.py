"""Content-Length framing: reading frames in, and the outbox that writes them out.

The outbox is the one way out of the server, for pygls' own messages (it is
the protocol's writer) and for ours. It joins everything sent while the event
loop is busy and writes it at once when the loop next turns: a request that
pushes a status and an eviction costs one ``write`` rather than three, and a
burst of pipelined requests is answered in a few writes. Order is kept.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import msgspec

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 256 * 1024 * 1024

_encoder = msgspec.json.Encoder()


class Frames(Protocol):
    """What reads frames: an ``asyncio.StreamReader`` or pygls' stdin reader."""

    def readline(self) -> Awaitable[bytes]: ...

    def readexactly(self, n: int) -> Awaitable[bytes]: ...


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


class Outbox:
    def __init__(self) -> None:
        self._pending: list[bytes] = []
        self._scheduled = False
        self._sink: Callable[[bytes], object] | None = None
        self._deferred: list[Callable[[], None]] = []

    def attach(self, sink: Callable[[bytes], object]) -> None:
        """Where frames go (stdout, a socket); anything already queued goes first."""
        self._sink = sink
        self.flush()

    def defer(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once, right after the next flush (work that may follow the answers)."""
        self._deferred.append(callback)
        self._schedule()

    # pygls' Writer protocol: it hands over whole frames.
    def write(self, data: bytes) -> None:
        self._pending.append(data)
        self._schedule()

    def _schedule(self) -> None:
        if self._scheduled:
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

    def respond(self, msg_id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def error(self, msg_id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.send({"jsonrpc": "2.0", "id": msg_id, "error": error})

    def flush(self) -> None:
        self._scheduled = False
        if self._sink is None:
            return
        if self._pending:
            data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
            self._pending.clear()
            self._sink(data)
        deferred, self._deferred = self._deferred, []
        for callback in deferred:
            try:
                callback()
            except Exception:
                log.exception("deferred work after a flush failed")


async def read_frames(reader: Frames, handle: Callable[[bytes], None], outbox: Outbox) -> None:
    """Hand each Content-Length framed body to ``handle`` until end of input."""
    while True:
        length: int | None = None
        while True:
            line = await reader.readline()
            if not line:
                return
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    length = None
        if length is None or not 0 <= length <= MAX_BODY_BYTES:
            outbox.error(None, -32700, "parse error: missing or bad Content-Length")
            continue
        handle(await reader.readexactly(length))
