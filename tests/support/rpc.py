"""The one JSON-RPC peer of the tests and benches: LSP framing and a client.

Framing (both sides use it; the fake server of the CLI tests too):
``frame`` / ``frame_body`` make a ``Content-Length`` frame, ``FrameSplitter``
cuts frames out of bytes arriving in chunks of any size, ``FrameReader``
pulls one body at a time from a blocking stream, ``read_message`` /
``read_all_messages`` decode them, ``request`` / ``notification`` build
messages. It is written apart from the server's own framing on purpose: the
tests judge the server's output with an implementation that shares no code
with it, and it is strict (``\\r\\n`` line ends, a valid ``Content-Length``).

``RpcClient`` talks to one child process over its stdin/stdout, in one of
two ways, chosen by how it is made:

- ``RpcClient.start(argv)`` (blocking, for plain tests): a thread reads the
  child's output all the time, so the child never blocks on a full pipe
  unless a test holds the output on purpose (``hold_output``); every message
  goes to the test as it came (``read``, ``reply_to``, ``read_until_eof``),
  so a test sees responses and notifications interleaved and can send
  anything, malformed bytes included (``write``). Nothing is answered for it.
- ``await RpcClient.spawn(argv)`` (asyncio, for async tests and benches):
  responses are matched to awaited requests by id (``call``, many in
  flight at once with ``pipelined``), notifications are counted and, when
  asked (``keep``), kept; requests from the server get a ``null`` result so
  it never stalls. The output is parsed in the protocol callback, no stream
  reader or per-message coroutine, and each response is timestamped when its
  bytes are parsed (``timed``): the benches compare the server with a
  hand-written echo loop, so the client must cost next to nothing per message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import subprocess
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, Final, Protocol, Self

import msgspec

TIMEOUT: Final = 60.0
"""Seconds a blocking read waits for the server before the test fails: a bound only a hang
reaches (tests prove order; timing goals live in tests/bench)."""
READ_CHUNK: Final = 64 * 1024
MAX_HEADER_BYTES: Final = 8 * 1024
"""Output with no header end this far in is not LSP (a stray print, garbage)."""

_encode = msgspec.json.Encoder().encode
_decode_any = msgspec.json.Decoder().decode

# ---------------------------------------------------------------------- framing


class FramingError(ValueError):
    """Bytes that are not a well-formed ``Content-Length`` frame."""


def frame_body(body: bytes) -> bytes:
    """A frame around an already encoded body (which may be anything, even not JSON)."""
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


def frame(message: Any) -> bytes:
    """A frame around ``message`` encoded as JSON (UTF-8, not ASCII-escaped)."""
    return frame_body(_encode(message))


def request(msg_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    """A request message; ``params`` None leaves the member out."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> dict[str, Any]:
    """A notification message; ``params`` None leaves the member out."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def is_response(message: dict[str, Any]) -> bool:
    return "method" not in message and "id" in message


def _body_length(headers: bytes) -> int:
    for line in headers.split(b"\r\n"):
        name, colon, value = line.partition(b":")
        if colon and name.strip().lower() == b"content-length":
            with contextlib.suppress(ValueError):
                length = int(value)
                if length >= 0:
                    return length
            break
    raise FramingError(f"no valid Content-Length in the headers {headers[:200]!r}")


class FrameSplitter:
    """Frames out of bytes that arrive in chunks of any size; each body goes to ``on_body``."""

    def __init__(self, on_body: Callable[[bytes], None]) -> None:
        self._on_body = on_body
        self._buffer = bytearray()

    @property
    def partial(self) -> bool:
        """True when the bytes so far end inside a frame."""
        return bool(self._buffer)

    def feed(self, data: bytes) -> None:
        """Raises FramingError for bytes that are not a frame (the rest is then unusable)."""
        buffer = self._buffer
        buffer += data
        start = 0
        try:
            while True:
                end = buffer.find(b"\r\n\r\n", start)
                if end < 0:
                    if len(buffer) - start > MAX_HEADER_BYTES:
                        raise FramingError(f"no header end in {bytes(buffer[start:200])!r}")
                    return
                body_start = end + 4
                body_end = body_start + _body_length(bytes(buffer[start:end]))
                if body_end > len(buffer):
                    return
                body = bytes(buffer[body_start:body_end])
                start = body_end
                self._on_body(body)
        finally:
            del buffer[:start]


class ChunkStream(Protocol):
    def read1(self, size: int = ..., /) -> bytes: ...


class FrameReader:
    """Whole bodies, one at a time, from a blocking stream (through ``FrameSplitter``)."""

    def __init__(self) -> None:
        self._bodies: deque[bytes] = deque()
        self._frames = FrameSplitter(self._bodies.append)

    def read(self, stream: ChunkStream) -> bytes | None:
        """The next body; None at the stream's clean end. Raises FramingError."""
        while not self._bodies:
            chunk = stream.read1(READ_CHUNK)
            if not chunk:
                if self._frames.partial:
                    raise FramingError("the stream ended inside a frame")
                return None
            self._frames.feed(chunk)
        return self._bodies.popleft()


class BodyReader(Protocol):
    """``FrameReader``, or any reader of bodies with the same ``read``."""

    def read(self, stream: Any, /) -> bytes | None: ...


END_OF_OUTPUT: Final = object()
"""What ``read_message`` returns at the end of the stream."""


def read_message(frames: BodyReader, stream: Any) -> Any:
    """The next JSON message of ``stream``, or ``END_OF_OUTPUT`` at its end.

    ``frames`` keeps what was read past the message (one per stream). Raises
    ValueError (FramingError, UnicodeDecodeError) for output that is not a frame.
    """
    body = frames.read(stream)
    if body is None:
        return END_OF_OUTPUT
    try:
        return json.loads(body)
    except ValueError as error:
        raise ValueError(f"{error} in the frame {body[:300]!r}") from error


def read_all_messages(data: bytes) -> list[Any]:
    """Every framed message of a whole output."""
    messages: list[Any] = []
    splitter = FrameSplitter(lambda body: messages.append(json.loads(body)))
    splitter.feed(data)
    if splitter.partial:
        raise FramingError("the output ended inside a frame")
    return messages


# ----------------------------------------------------------------------- client


class RpcError(Exception):
    """A JSON-RPC error response, or the server gone before it answered."""

    def __init__(self, method: str, error: dict[str, Any]) -> None:
        self.code: int = error.get("code", 0)
        self.message: str = error.get("message", "")
        self.data: Any = error.get("data")
        super().__init__(f"{method}: [{self.code}] {self.message}")


class Incoming(msgspec.Struct):
    """Any incoming message as the asyncio client routes it; result/params stay raw.

    Deferring their decoding keeps the per-message cost flat whatever the
    payload size (a 400 KB render, a 64-deep pipeline of adds).
    """

    id: int | str | None = None
    method: str | None = None
    error: dict[str, Any] | None = None
    result: msgspec.Raw = msgspec.Raw(b"null")
    params: msgspec.Raw = msgspec.Raw(b"null")


_decode_incoming = msgspec.json.Decoder(Incoming).decode

ResponseHandler = Callable[[Incoming, int], None]
"""Called with a response and the ns timestamp its bytes were parsed."""


class _Garbled:
    """What the reader thread found instead of a well-formed frame."""

    def __init__(self, problem: str) -> None:
        self.problem = problem


class _Pipes(asyncio.SubprocessProtocol):
    def __init__(self, client: RpcClient) -> None:
        self._client = client

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self._client._feed(data)

    def process_exited(self) -> None:
        self._client._on_exit()


class RpcClient:
    """One child process speaking JSON-RPC on its stdin/stdout (see the module docstring)."""

    def __init__(self, name: str) -> None:
        """Use ``start`` or ``spawn``."""
        self.name = name
        self.spawned_ns = 0
        self.notification_counts: Counter[str] = Counter()
        """How many of each notification arrived (asyncio client)."""
        self.kept: dict[str, list[Any]] = {}
        self.answered: list[Any] = []
        """The ids of the answers read, in the order they came."""
        self.seen: list[dict[str, Any]] = []
        """Every message read so far, in arrival order (blocking client)."""
        self.process: subprocess.Popen[bytes] | None = None
        """The child (blocking client)."""
        self._next_id = 0
        # blocking client
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._eof = False
        self._reading = threading.Event()
        self._reading.set()
        # asyncio client
        self._frames = FrameSplitter(self._on_body)
        self._now = 0
        self._pending: dict[int | str, ResponseHandler] = {}
        self._corked: list[bytes] | None = None
        self._transport: asyncio.SubprocessTransport | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._exited: asyncio.Future[None] | None = None

    # ------------------------------------------------------ the blocking client

    @classmethod
    def start(
        cls,
        argv: Sequence[str],
        *,
        name: str = "server",
        stderr: IO[bytes] | int | None = subprocess.DEVNULL,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> Self:
        """Start ``argv`` and a thread that reads its output into the client's inbox."""
        client = cls(name)
        client.spawned_ns = time.perf_counter_ns()
        client.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, cwd=cwd, env=env
        )
        threading.Thread(target=client._read_loop, daemon=True).start()
        return client

    def _read_loop(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        stdout = self.process.stdout
        frames = FrameReader()
        try:
            while True:
                self._reading.wait()
                message = read_message(frames, stdout)
                if message is END_OF_OUTPUT:
                    return
                self._inbox.put(message)
        except ValueError as error:  # FramingError, UnicodeDecodeError, bad JSON
            self._inbox.put(_Garbled(str(error)))
        finally:
            self._inbox.put(END_OF_OUTPUT)

    def hold_output(self) -> None:
        """Stop reading the child's output (after the frame being read), so its pipe fills."""
        self._reading.clear()

    def release_output(self) -> None:
        self._reading.set()

    def _next(self, timeout: float, waiting_for: str) -> Any:
        try:
            item = self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"{waiting_for}: nothing within {timeout} s") from None
        if isinstance(item, _Garbled):
            self._eof = True
            raise AssertionError(f"the server's output is not well-formed: {item.problem}")
        if item is END_OF_OUTPUT:
            self._eof = True
        else:
            self.seen.append(item)
        return item

    def read(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next message; fails the test if none comes in time or the output ended."""
        if self._eof:
            raise AssertionError("the server closed its output")
        message = self._next(timeout, "waiting for a message")
        if message is END_OF_OUTPUT:
            raise AssertionError("the server closed its output")
        result: dict[str, Any] = message
        return result

    def read_until_eof(self, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        """Everything the child writes until it closes its output (all well-formed)."""
        messages: list[dict[str, Any]] = []
        while not self._eof:
            item = self._next(timeout, "waiting for the server to close its output")
            if item is not END_OF_OUTPUT:
                messages.append(item)
        return messages

    def reply_to(self, msg_id: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The response with ``msg_id``, reading past everything before it."""
        while True:
            message = self.read(timeout)
            if is_response(message) and message["id"] == msg_id:
                return message

    def next_response(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next response whatever its id, reading past notifications and requests."""
        while True:
            message = self.read(timeout)
            if "method" not in message:
                return message

    def send(self, *messages: Any) -> None:
        """All messages in one write."""
        self.write(b"".join(frame(message) for message in messages))

    def request(self, method: str, params: Any = None, timeout: float = TIMEOUT) -> dict[str, Any]:
        """Send a request and return the whole response (result or error)."""
        msg_id = self.new_id()
        self.send(request(msg_id, method, params))
        return self.reply_to(msg_id, timeout)

    def result(self, method: str, params: Any = None) -> Any:
        """The result of a request; fails the test on an error response."""
        reply = self.request(method, params)
        assert "result" in reply, reply
        return reply["result"]

    def notifications(self, method: str) -> list[Any]:
        """The params of every ``method`` notification read so far, in order."""
        return [m.get("params") for m in self.seen if m.get("method") == method and "id" not in m]

    def shutdown_and_exit(self, timeout: float = TIMEOUT) -> int:
        """LSP shutdown (which must succeed), then exit; returns the exit code."""
        reply = self.request("shutdown", timeout=timeout)
        assert "error" not in reply, reply
        self.send(notification("exit"))
        return self.wait(timeout)

    def terminate(self) -> None:
        assert self.process is not None
        self.process.terminate()

    def close_stdin(self) -> None:
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.close()

    def wait(self, timeout: float = TIMEOUT) -> int:
        assert self.process is not None
        return self.process.wait(timeout=timeout)

    def kill(self) -> None:
        """End the child now if it still runs, and close the pipes."""
        assert self.process is not None
        self.release_output()
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=TIMEOUT)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    # ------------------------------------------------------- the asyncio client

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        name: str = "server",
        stderr: IO[bytes] | int | None = subprocess.DEVNULL,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> Self:
        """Start ``argv`` on the running loop; its output is parsed as it arrives.

        ``stderr`` None leaves the child's stderr on the test's, where pytest
        captures it and shows it with a failure.
        """
        client = cls(name)
        loop = asyncio.get_running_loop()
        client._exited = loop.create_future()
        client.spawned_ns = time.perf_counter_ns()
        transport, _ = await loop.subprocess_exec(
            lambda: _Pipes(client),
            *argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=cwd,
            env=env,
        )
        client._transport = transport
        stdin = transport.get_pipe_transport(0)
        assert isinstance(stdin, asyncio.WriteTransport)
        client._stdin = stdin
        return client

    @property
    def pid(self) -> int:
        if self.process is not None:
            return self.process.pid
        assert self._transport is not None
        return self._transport.get_pid()

    def _on_exit(self) -> None:
        if self._exited is not None and not self._exited.done():
            self._exited.set_result(None)
        self._fail_pending(f"{self.name} exited")

    def _fail_pending(self, problem: str) -> None:
        lost = Incoming(error={"code": -1, "message": problem})
        now = time.perf_counter_ns()
        pending, self._pending = self._pending, {}
        for handler in pending.values():
            handler(lost, now)

    def _feed(self, data: bytes) -> None:
        self._now = time.perf_counter_ns()
        # Writes made while handling this chunk (pipelined refills, acks) are
        # corked and leave in one syscall at the end.
        self._corked = []
        try:
            self._frames.feed(data)
        except ValueError as error:  # FramingError, a body that is not JSON
            assert self._transport is not None
            self._fail_pending(f"{self.name} wrote what is not JSON-RPC: {error}")
            self._transport.kill()
        finally:
            corked, self._corked = self._corked, None
            if corked:
                self.write(b"".join(corked))

    def _on_body(self, body: bytes) -> None:
        message = _decode_incoming(body)
        method = message.method
        if method is None:
            handler = self._pending.pop(message.id, None)  # type: ignore[arg-type]
            self.answered.append(message.id)
            if handler is not None:
                handler(message, self._now)
        elif message.id is not None:
            # e.g. client/registerCapability: acknowledge so the server moves on.
            self.write(frame({"jsonrpc": "2.0", "id": message.id, "result": None}))
        else:
            self.notification_counts[method] += 1
            kept = self.kept.get(method)
            if kept is not None:
                kept.append(_decode_any(message.params))

    def keep(self, method: str) -> list[Any]:
        """Keep the params of every ``method`` notification from now on, in this list."""
        return self.kept.setdefault(method, [])

    @property
    def in_flight(self) -> list[Any]:
        """The ids of the requests sent and not answered yet (to cancel one, say)."""
        return list(self._pending)

    async def timed_raw(self, method: str, params: Any) -> tuple[int, msgspec.Raw]:
        """One request; returns (round-trip ns, undecoded result). Raises RpcError."""
        msg_id = self.new_id()
        data = frame(request(msg_id, method, params))
        reply: asyncio.Future[tuple[Incoming, int]] = asyncio.get_running_loop().create_future()

        def on_reply(message: Incoming, now: int) -> None:
            if not reply.done():
                reply.set_result((message, now))

        self._pending[msg_id] = on_reply
        sent = time.perf_counter_ns()
        self.write(data)
        message, received = await reply
        if message.error is not None:
            raise RpcError(method, message.error)
        return received - sent, message.result

    async def timed(self, method: str, params: Any) -> tuple[int, Any]:
        """One request; returns (round-trip ns, decoded result). Raises RpcError."""
        ns, raw = await self.timed_raw(method, params)
        return ns, _decode_any(raw)

    async def call(self, method: str, params: Any = None, timeout: float | None = None) -> Any:
        """The result of one request. Raises RpcError, or TimeoutError after ``timeout`` s."""
        if timeout is None:
            return (await self.timed(method, params))[1]
        return (await asyncio.wait_for(self.timed(method, params), timeout))[1]

    async def burst(self, requests: Sequence[tuple[str, Any]]) -> list[Any]:
        """Every (method, params) in one write; their results (an RpcError for a refusal),
        in order."""
        loop = asyncio.get_running_loop()
        replies: list[asyncio.Future[Incoming]] = []
        frames = []
        for method, params in requests:
            msg_id = self.new_id()
            reply: asyncio.Future[Incoming] = loop.create_future()

            def on_reply(
                message: Incoming, now: int, reply: asyncio.Future[Incoming] = reply
            ) -> None:
                if not reply.done():
                    reply.set_result(message)

            self._pending[msg_id] = on_reply
            replies.append(reply)
            frames.append(frame(request(msg_id, method, params)))
        self.write(b"".join(frames))
        results: list[Any] = []
        for (method, _), reply in zip(requests, replies, strict=True):
            message = await reply
            if message.error is not None:
                results.append(RpcError(method, message.error))
            else:
                results.append(_decode_any(message.result))
        return results

    async def pipelined(self, method: str, params: Sequence[Any], inflight: int) -> int:
        """Send every params with at most ``inflight`` outstanding; returns total ns.

        Frames are encoded before the clock starts and each response sends the
        next frame from the parse callback, so the client adds next to nothing.
        """
        frames = []
        for p in params:
            msg_id = self.new_id()
            frames.append((msg_id, frame(request(msg_id, method, p))))
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        errors: list[dict[str, Any]] = []
        sent = 0
        left = len(frames)

        def send_next() -> None:
            nonlocal sent
            msg_id, data = frames[sent]
            sent += 1
            self._pending[msg_id] = on_reply
            self.write(data)

        def on_reply(message: Incoming, now: int) -> None:
            nonlocal left
            if message.error is not None:
                errors.append(message.error)
            left -= 1
            if sent < len(frames):
                send_next()
            elif left == 0 and not done.done():
                done.set_result(now)

        start = time.perf_counter_ns()
        for _ in range(min(inflight, len(frames))):
            send_next()
        end = await done
        if errors:
            raise RpcError(method, errors[0])
        return end - start

    async def shutdown(self, timeout: float = TIMEOUT) -> int | None:
        """LSP shutdown, then exit; returns the exit code. Raises if the child does not comply."""
        assert self._transport is not None and self._exited is not None
        await self.call("shutdown", None, timeout)
        self.notify("exit")
        await asyncio.wait_for(asyncio.shield(self._exited), timeout)
        return self._transport.get_returncode()

    async def close(self, timeout: float = 5.0) -> int | None:
        """End the child in any case: shutdown + exit, killed if it does not leave in time."""
        assert self._transport is not None and self._exited is not None
        if not self._exited.done():
            with contextlib.suppress(Exception):
                await self.shutdown(timeout)
            if not self._exited.done():
                self._transport.kill()
                await self._exited
        code = self._transport.get_returncode()
        self._transport.close()
        return code

    # --------------------------------------------------------------------- both

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def write(self, data: bytes) -> None:
        """Bytes as they are, framed or not (the blocking client waits until the pipe took them)."""
        if self.process is not None:
            stdin = self.process.stdin
            assert stdin is not None
            stdin.write(data)
            stdin.flush()
        elif self._corked is not None:
            self._corked.append(data)
        else:
            assert self._stdin is not None
            self._stdin.write(data)

    def notify(self, method: str, params: Any = None) -> None:
        self.write(frame(notification(method, params)))
