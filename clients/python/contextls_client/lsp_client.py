"""A small LSP client: to the user's daemon over its Unix socket, or to a spawned
``contextls serve`` over stdio.

It speaks plain JSON-RPC 2.0 with ``Content-Length`` framing, encodes
parameters from the msgspec Structs of :mod:`contextls.protocol` and decodes
results back into them, so every call doubles as a check of the wire format.
It never imports the server's implementation, only the protocol module.

Typical use::

    async with ContextlsClient() as client:
        await client.initialize(Path.cwd(), {"maxTokens": 4000})
        status = await client.call(Requests.STATUS, StatusParams())
    # leaving the block sends shutdown + exit and waits for the process
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket as sockets
import sys
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, TypeVar

import msgspec

from contextls.protocol import (
    DidEvictParams,
    Request,
    Settings,
    Status,
    Wire,
)
from contextls_client.messages import (
    CLIENT_NAME,
    ContextlsError,
    ReceivedNotification,
    ServerGoneError,
)
from contextls_client.rpc import Answer, NotificationHandler, RpcConnection

__all__ = ["ContextlsClient", "ContextlsError", "ReceivedNotification", "ServerGoneError"]

ResultT = TypeVar("ResultT")
P = TypeVar("P", bound=Wire)
R = TypeVar("R", bound=Wire)

DEFAULT_SERVER_COMMAND: Final[tuple[str, ...]] = (sys.executable, "-P", "-m", "contextls", "serve")
"""The server this client spawns unless told otherwise: the same interpreter's package.
``-P``: the current directory, which may hold a ``types.py``, is never on ``sys.path``."""

STDERR_LINES_KEPT: Final = 200
READ_CHUNK: Final = 256 * 1024


class ContextlsClient:
    """An LSP client for one ``contextls serve`` process, or one session on the daemon: the
    asyncio driver of ``rpc.Connection``.

    ``socket`` is the daemon's Unix socket (see ``contextls.common.places``); without
    it, ``command`` is the argv of the server to spawn (default
    :data:`DEFAULT_SERVER_COMMAND`). ``connected`` is a connection already made to the
    daemon, with the ``connection`` that spoke on it (the MCP server reaches the daemon
    once, blocking, and goes on on the same connection).
    ``request_timeout`` bounds every request, in seconds. Notifications the
    server sends are kept in :attr:`notifications`; :meth:`evictions` and
    :attr:`latest_status` decode the two contextls ones.
    """

    def __init__(
        self,
        command: Sequence[str] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        request_timeout: float = 120.0,
        socket: Path | None = None,
        on_gone: Callable[[ServerGoneError], object] | None = None,
        client_name: str = CLIENT_NAME,
        connected: sockets.socket | None = None,
        connection: RpcConnection | None = None,
    ) -> None:
        """``on_gone`` is told at once when the server goes away (a request waiting on it
        is told too; a long-lived client also needs to know between requests)."""
        self.on_gone = on_gone
        self.command: tuple[str, ...] = tuple(command) if command else DEFAULT_SERVER_COMMAND
        self.socket = socket
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.request_timeout = request_timeout
        self.rpc = connection or RpcConnection(client_name)
        self.server_capabilities: dict[str, Any] = {}
        self._connected = connected
        self._process: asyncio.subprocess.Process | None = None
        self._pending: dict[int, asyncio.Future[Answer]] = {}
        self._stderr_tail: deque[str] = deque(maxlen=STDERR_LINES_KEPT)
        self._tasks: list[asyncio.Task[None]] = []
        self._write_lock = asyncio.Lock()
        self._gone: ServerGoneError | None = None
        self._shut_down = False

    # ------------------------------------------------------------------ life cycle

    async def start(self) -> None:
        """Connect to the daemon (``socket``), or spawn the server; then read its output."""
        if self._process is not None or self._writer is not None:
            raise RuntimeError("the server is already started")
        if self._connected is not None:
            sock, self._connected = self._connected, None
            sock.setblocking(False)
            self._reader, self._writer = await asyncio.open_unix_connection(sock=sock)
            self._tasks = [asyncio.create_task(self._read_messages(), name="contextls-read")]
            return
        if self.socket is not None:
            await self._connect(self.socket)
            return
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
            )
        except OSError as error:
            raise ServerGoneError(
                f"cannot start the server {list(self.command)}: {error}"
            ) from error
        self._reader, self._writer = self._process.stdout, self._process.stdin  # type: ignore[assignment]
        self._tasks = [
            asyncio.create_task(self._read_messages(), name="contextls-read"),
            asyncio.create_task(self._read_stderr(), name="contextls-stderr"),
        ]

    async def _connect(self, path: Path) -> None:
        from contextls.common.places import peer_uid

        try:
            self._reader, self._writer = await asyncio.open_unix_connection(str(path))
        except OSError as error:
            raise ServerGoneError(f"cannot connect to the daemon at {path}: {error}") from error
        sock = self._writer.get_extra_info("socket")
        if peer_uid(sock) != os.getuid():
            self._writer.close()
            raise ServerGoneError(f"{path} is served by another user; not talking to it")
        self._tasks = [asyncio.create_task(self._read_messages(), name="contextls-read")]

    async def initialize(
        self, root: str | os.PathLike[str], options: Settings | Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Open ``root`` as the only workspace folder; returns the server capabilities.

        ``options`` become ``initializationOptions``: a :class:`Settings` or a
        flat camelCase mapping holding only the settings to override.
        """
        settings = (
            msgspec.to_builtins(options) if isinstance(options, Settings) else dict(options or {})
        )
        request_id = self.rpc.initialize(root, settings)
        answer = await self._answer(request_id, "initialize", None)
        result = answer.decode(dict[str, Any], "initialize")
        self.server_capabilities = result.get("capabilities", {})
        await self.notify("initialized", {})
        return self.server_capabilities

    async def shutdown(self, timeout: float = 10.0) -> int | None:
        """Send ``shutdown`` then ``exit`` and wait for the process; returns its exit code.

        A server that does not exit within ``timeout`` seconds is killed. On the
        daemon, this ends the session (the daemon goes on) and returns None.
        """
        if self._writer is None or self._shut_down:
            return self._process.returncode if self._process else None
        self._shut_down = True
        if self._gone is None:
            with contextlib.suppress(ServerGoneError, ContextlsError):
                await self.request("shutdown", None, None, timeout=timeout)
            with contextlib.suppress(ServerGoneError, ConnectionError):
                await self.notify("exit", None)
        return await self._wait_for_exit(timeout)

    async def close(self) -> None:
        """Stop the process (or leave the daemon) without the LSP handshake."""
        if self._writer is None:
            return
        self._shut_down = True
        await self._wait_for_exit(1.0)

    async def __aenter__(self) -> ContextlsClient:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc is None or isinstance(exc, ContextlsError):
            await self.shutdown()
        else:
            await self.close()

    @property
    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (for error reports)."""
        return "".join(self._stderr_tail)

    # ------------------------------------------------------------------ messages

    @property
    def notifications(self) -> list[ReceivedNotification]:
        """Every notification the server sent so far."""
        return self.rpc.notifications

    async def request(
        self,
        method: str,
        params: msgspec.Struct | Mapping[str, Any] | None,
        result_type: type[ResultT] | None,
        *,
        timeout: float | None = None,
    ) -> ResultT:
        """Send a request and decode its result into ``result_type``.

        Raises :class:`ContextlsError` when the server answers with an error and
        :class:`ServerGoneError` when it cannot answer at all.
        """
        self._check_alive()
        answer = await self._answer(self.rpc.request(method, params), method, timeout)
        return answer.decode(result_type, method)

    async def notify(self, method: str, params: msgspec.Struct | Mapping[str, Any] | None) -> None:
        """Send a notification (no answer expected)."""
        self._check_alive()
        self.rpc.notify(method, params)
        await self._flush()

    def on_notification(self, handler: NotificationHandler) -> None:
        """Call ``handler`` for every notification, as it arrives."""
        self.rpc.handlers.append(handler)

    def evictions(self) -> list[DidEvictParams]:
        """Every ``contextls/didEvict`` received so far, decoded."""
        return self.rpc.evictions()

    @property
    def latest_status(self) -> Status | None:
        """The last ``contextls/didChangeStatus`` pushed by the server, if any."""
        return self.rpc.latest_status

    # ------------------------------------------------------------------ typed requests

    async def call(self, request: Request[P, R], params: P, *, timeout: float | None = None) -> R:
        """Send one of the protocol's requests; its result comes back decoded and typed."""
        return await self.request(request.method, params, request.result, timeout=timeout)

    # ------------------------------------------------------------------ internals

    def _check_alive(self) -> None:
        if self._writer is None:
            raise RuntimeError("call start() first")
        if self._gone is not None:
            raise self._gone

    async def _answer(self, request_id: int, method: str, timeout: float | None) -> Answer:
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._flush()
            return await asyncio.wait_for(future, timeout or self.request_timeout)
        except TimeoutError as error:
            raise ServerGoneError(
                f"no answer to {method} within {timeout or self.request_timeout:g}s",
                self.stderr_tail,
            ) from error
        finally:
            self._pending.pop(request_id, None)

    async def _flush(self) -> None:
        assert self._writer is not None
        async with self._write_lock:
            data = self.rpc.data_to_send()
            if not data:
                return
            try:
                self._writer.write(data)
                await self._writer.drain()
            except (ConnectionError, BrokenPipeError) as error:
                gone = self._mark_gone("the server closed its input")
                raise gone from error

    async def _read_messages(self) -> None:
        reader = self._reader
        assert reader is not None
        try:
            while chunk := await reader.read(READ_CHUNK):
                for answer in self.rpc.receive(chunk):
                    future = self._pending.get(answer.id)
                    if future is not None and not future.done():
                        future.set_result(answer)
                await self._flush()  # answers to the server's own requests
            reason = self.rpc.end_of_input()
        except ServerGoneError as error:
            reason = error.reason
        except Exception as error:  # a notification handler failed: stop cleanly, say why
            reason = f"the client failed while reading: {error!r}"
        if not self._shut_down and self._process is not None:
            # Give the exit code and last stderr lines a moment to land, so the
            # report says why the server went away.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._process.wait(), 1.0)
            if self._process.returncode is not None:
                reason += f" (exit code {self._process.returncode})"
        self._mark_gone(reason)

    async def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        while line := await self._process.stderr.readline():
            self._stderr_tail.append(line.decode("utf-8", errors="replace"))

    def _mark_gone(self, reason: str) -> ServerGoneError:
        if self._gone is None:
            self._gone = ServerGoneError(reason, self.stderr_tail)
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(self._gone)
            if self.on_gone is not None:
                self.on_gone(self._gone)
        return self._gone

    async def _wait_for_exit(self, timeout: float) -> int | None:
        process = self._process
        if process is None:  # a daemon session: leave it, the daemon goes on
            assert self._writer is not None
            self._writer.close()
            for task in self._tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.wait_for(task, timeout)
            return None
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, 1.0)
        return process.returncode
