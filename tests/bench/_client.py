"""A minimal, fast JSON-RPC 2.0 client over a child process's stdio (LSP framing).

Why not pytest-lsp or pygls' client: the benches compare the server with a
hand-written echo loop, so the client must cost as little as possible per
message or it becomes the floor itself. This one parses frames straight out of
``pipe_data_received`` (no stream reader, no per-message coroutine), decodes
with msgspec, and timestamps each response when its bytes are parsed, so the
latency excludes the client's coroutine wake-up.

Server -> client notifications (``contextls/didChangeStatus`` after each
change, ``contextls/didEvict`` on eviction) are counted and dropped unless a
bench asks to keep them; they never reach the response matching, which is by
id only. Server -> client requests get a ``null`` result so nothing stalls.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import msgspec

from contextls.protocol.framing import FrameParser
from contextls.protocol.framing import frame as frame_body

_encode = msgspec.json.Encoder().encode
_decode_any = msgspec.json.Decoder().decode


class Message(msgspec.Struct, omit_defaults=True):
    """Any incoming JSON-RPC message; result/params stay raw until asked for.

    Deferring their decoding keeps the per-message cost of the client flat
    whatever the payload size (a 400 KB render, a 64-deep pipeline of adds).
    """

    id: int | str | None = None
    method: str | None = None
    error: dict[str, Any] | None = None
    result: msgspec.Raw = msgspec.Raw(b"null")
    params: msgspec.Raw = msgspec.Raw(b"null")


_decode = msgspec.json.Decoder(Message).decode

Handler = Callable[[Message, int], None]
"""Called with a response and the ns timestamp its bytes were parsed."""


class RpcError(Exception):
    def __init__(self, method: str, error: dict[str, Any]) -> None:
        self.code: int = error.get("code", 0)
        self.message: str = error.get("message", "")
        super().__init__(f"{method}: [{self.code}] {self.message}")


def frame(payload: dict[str, Any]) -> bytes:
    return frame_body(_encode(payload))


class _Pipes(asyncio.SubprocessProtocol):
    def __init__(self, client: RpcClient) -> None:
        self._client = client

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self._client._feed(data)

    def process_exited(self) -> None:
        self._client._on_exit()


class RpcClient:
    """One child process speaking JSON-RPC on stdin/stdout."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.notifications: Counter[str] = Counter()
        self.kept: dict[str, list[Any]] = {}
        self.spawned_ns = 0
        self._frames = FrameParser(self._on_body, self._on_framing_error)
        self._now = 0
        self._pending: dict[int, Handler] = {}
        self._next_id = 1
        self._transport: asyncio.SubprocessTransport | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._exited: asyncio.Future[None] | None = None
        self._corked: list[bytes] | None = None

    # -- process lifecycle -------------------------------------------------

    @classmethod
    async def spawn(
        cls,
        name: str,
        argv: Sequence[str],
        *,
        stderr: IO[bytes] | int | None = None,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> RpcClient:
        client = cls(name)
        loop = asyncio.get_running_loop()
        client._exited = loop.create_future()
        client.spawned_ns = time.perf_counter_ns()
        transport, _ = await loop.subprocess_exec(
            lambda: _Pipes(client),
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr if stderr is not None else asyncio.subprocess.DEVNULL,
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
        assert self._transport is not None
        return self._transport.get_pid()

    async def close(self, timeout: float = 5.0) -> int | None:
        """LSP shutdown + exit; kill the child if it does not leave in time."""
        assert self._transport is not None and self._exited is not None
        if not self._exited.done():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.request("shutdown", None), timeout)
            with contextlib.suppress(Exception):
                self.notify("exit", None)
            try:
                await asyncio.wait_for(asyncio.shield(self._exited), timeout)
            except TimeoutError:
                self._transport.kill()
                await self._exited
        code = self._transport.get_returncode()
        self._transport.close()
        return code

    def _on_exit(self) -> None:
        if self._exited is not None and not self._exited.done():
            self._exited.set_result(None)
        lost = Message(error={"code": -1, "message": f"{self.name} exited"})
        for handler in list(self._pending.values()):
            handler(lost, time.perf_counter_ns())
        self._pending.clear()

    # -- wire --------------------------------------------------------------

    def _feed(self, data: bytes) -> None:
        self._now = time.perf_counter_ns()
        # Writes made while handling this chunk (pipelined refills, acks) are
        # corked and leave in one syscall at the end.
        self._corked = []
        try:
            self._frames.feed(data)
        finally:
            corked, self._corked = self._corked, None
            if corked:
                self.write(b"".join(corked))

    def _on_body(self, body: bytes) -> None:
        self._dispatch(_decode(body), self._now)

    @staticmethod
    def _on_framing_error(problem: str) -> None:
        raise ValueError(f"the server's output is not framed: {problem}")

    def _dispatch(self, msg: Message, now: int) -> None:
        method = msg.method
        if method is None:
            handler = self._pending.pop(msg.id, None)  # type: ignore[arg-type]
            if handler is not None:
                handler(msg, now)
        elif msg.id is not None:
            # e.g. client/registerCapability: acknowledge so the server moves on.
            self.write(frame({"jsonrpc": "2.0", "id": msg.id, "result": None}))
        else:
            self.notifications[method] += 1
            kept = self.kept.get(method)
            if kept is not None:
                kept.append(_decode_any(msg.params))

    def write(self, data: bytes) -> None:
        if self._corked is not None:
            self._corked.append(data)
            return
        assert self._stdin is not None
        self._stdin.write(data)

    def keep(self, method: str) -> list[Any]:
        """Start keeping the params of ``method`` notifications; returns the list."""
        return self.kept.setdefault(method, [])

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    # -- requests ----------------------------------------------------------

    def notify(self, method: str, params: Any) -> None:
        self.write(frame({"jsonrpc": "2.0", "method": method, "params": params}))

    async def timed_raw(self, method: str, params: Any) -> tuple[int, msgspec.Raw]:
        """One request; returns (round-trip ns, undecoded result). Raises RpcError."""
        rid = self.next_id()
        data = frame({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        fut: asyncio.Future[tuple[Message, int]] = asyncio.get_running_loop().create_future()

        def on_reply(msg: Message, t: int) -> None:
            if not fut.done():
                fut.set_result((msg, t))

        self._pending[rid] = on_reply
        sent = time.perf_counter_ns()
        self.write(data)
        msg, received = await fut
        if msg.error is not None:
            raise RpcError(method, msg.error)
        return received - sent, msg.result

    async def timed(self, method: str, params: Any) -> tuple[int, Any]:
        """One request; returns (round-trip ns, decoded result). Raises RpcError."""
        ns, raw = await self.timed_raw(method, params)
        return ns, _decode_any(raw)

    async def request(self, method: str, params: Any) -> Any:
        return (await self.timed(method, params))[1]

    async def pipelined(self, method: str, params: Sequence[Any], inflight: int) -> int:
        """Send every params with at most ``inflight`` outstanding; returns total ns.

        Frames are encoded before the clock starts and each response sends the
        next frame from the parse callback, so the client adds next to nothing.
        """
        frames = []
        for p in params:
            rid = self.next_id()
            frames.append(
                (rid, frame({"jsonrpc": "2.0", "id": rid, "method": method, "params": p}))
            )
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        errors: list[dict[str, Any]] = []
        sent = 0
        left = len(frames)

        def send_next() -> None:
            nonlocal sent
            rid, data = frames[sent]
            sent += 1
            self._pending[rid] = on_reply
            self.write(data)

        def on_reply(msg: Message, now: int) -> None:
            nonlocal left
            if msg.error is not None:
                errors.append(msg.error)
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
