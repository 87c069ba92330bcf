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
import itertools
import os
import sys
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, TypeVar

import msgspec

from contextls.protocol import (
    DidEvictParams,
    Notification,
    Request,
    Settings,
    Status,
    Wire,
)
from contextls.protocol.framing import FramingError, MessageReader, frame
from contextls_client.messages import (
    CLIENT_NAME,
    ContextlsError,
    ReceivedNotification,
    ServerGoneError,
    _ErrorResponse,
    _Incoming,
    _NotificationOut,
    _or_unset,
    _Request,
    _Response,
    _ResponseError,
    initialize_params,
)

__all__ = ["ContextlsClient", "ContextlsError", "ReceivedNotification", "ServerGoneError"]

ResultT = TypeVar("ResultT")
P = TypeVar("P", bound=Wire)
R = TypeVar("R", bound=Wire)

DEFAULT_SERVER_COMMAND: Final[tuple[str, ...]] = (sys.executable, "-P", "-m", "contextls", "serve")
"""The server this client spawns unless told otherwise: the same interpreter's package.
``-P``: the current directory, which may hold a ``types.py``, is never on ``sys.path``."""

METHOD_NOT_FOUND: Final = -32601
"""JSON-RPC's code (lsprotocol's ErrorCodes.MethodNotFound; not imported: it is slow to load)."""
STDERR_LINES_KEPT: Final = 200


NotificationHandler = Callable[[ReceivedNotification], None]


class ContextlsClient:
    """An LSP client for one ``contextls serve`` process, or one session on the daemon.

    ``socket`` is the daemon's Unix socket (see ``contextls.common.places``); without
    it, ``command`` is the argv of the server to spawn (default
    :data:`DEFAULT_SERVER_COMMAND`).
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
        self.notifications: list[ReceivedNotification] = []
        self.server_capabilities: dict[str, Any] = {}
        self._settings: dict[str, Any] = {}
        self._process: asyncio.subprocess.Process | None = None
        self._pending: dict[int, asyncio.Future[msgspec.Raw]] = {}
        self._ids = itertools.count(1)
        self._handlers: list[NotificationHandler] = []
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
        if isinstance(options, Settings):
            self._settings = msgspec.to_builtins(options)
        else:
            self._settings = dict(options or {})
        params = initialize_params(root, self._settings)
        result = await self.request("initialize", params, dict[str, Any])
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
        raw = await self.request_raw(method, params, timeout=timeout)
        try:
            return msgspec.json.decode(raw or b"null", type=result_type)  # type: ignore[arg-type]
        except msgspec.ValidationError as error:
            raise ServerGoneError(
                f"the server's answer to {method} does not match the protocol: {error}"
            ) from error

    async def request_raw(
        self,
        method: str,
        params: msgspec.Struct | Mapping[str, Any] | None,
        *,
        timeout: float | None = None,
    ) -> msgspec.Raw:
        """Send a request; return the undecoded JSON result."""
        self._check_alive()
        request_id = next(self._ids)
        future: asyncio.Future[msgspec.Raw] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._send(_Request(id=request_id, method=method, params=_or_unset(params)))
            return await asyncio.wait_for(future, timeout or self.request_timeout)
        except TimeoutError as error:
            raise ServerGoneError(
                f"no answer to {method} within {timeout or self.request_timeout:g}s",
                self.stderr_tail,
            ) from error
        finally:
            self._pending.pop(request_id, None)

    async def notify(self, method: str, params: msgspec.Struct | Mapping[str, Any] | None) -> None:
        """Send a notification (no answer expected)."""
        self._check_alive()
        await self._send(_NotificationOut(method=method, params=_or_unset(params)))

    def on_notification(self, handler: NotificationHandler) -> None:
        """Call ``handler`` for every notification, as it arrives."""
        self._handlers.append(handler)

    def evictions(self) -> list[DidEvictParams]:
        """Every ``contextls/didEvict`` received so far, decoded."""
        return [
            note.decode(DidEvictParams)
            for note in self.notifications
            if note.method == Notification.DID_EVICT
        ]

    @property
    def latest_status(self) -> Status | None:
        """The last ``contextls/didChangeStatus`` pushed by the server, if any."""
        for note in reversed(self.notifications):
            if note.method == Notification.DID_CHANGE_STATUS:
                return note.decode(Status)
        return None

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

    async def _send(self, message: msgspec.Struct) -> None:
        assert self._writer is not None
        data = frame(msgspec.json.encode(message))
        async with self._write_lock:
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
            messages = MessageReader()
            while (body := await messages.read_async(reader)) is not None:
                await self._dispatch(msgspec.json.decode(body, type=_Incoming))
            reason = "the server closed its output"
        except (FramingError, msgspec.DecodeError) as error:
            reason = f"the server broke the protocol: {error}"
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

    async def _dispatch(self, message: _Incoming) -> None:
        if message.method is not None and message.id is not None:
            await self._answer_server_request(message)
        elif message.method is not None:
            note = ReceivedNotification(message.method, message.params)
            self.notifications.append(note)
            for handler in self._handlers:
                handler(note)
        elif isinstance(message.id, int) and (future := self._pending.get(message.id)):
            if future.done():
                return
            if message.error is not None:
                error = message.error
                future.set_exception(ContextlsError(error.code, error.message, error.data))
            else:
                future.set_result(message.result)

    async def _answer_server_request(self, message: _Incoming) -> None:
        """Answer the few requests a server may send a plain client."""
        if message.method == "workspace/configuration":
            items = msgspec.json.decode(message.params or b"{}", type=dict[str, Any]).get(
                "items", []
            )
            await self._send(_Response(id=message.id, result=[self._settings for _ in items]))
        elif message.method in (
            "client/registerCapability",
            "client/unregisterCapability",
            "window/workDoneProgress/create",
            "window/showMessageRequest",
        ):
            await self._send(_Response(id=message.id, result=None))
        else:
            not_found = _ResponseError(
                METHOD_NOT_FOUND, f"{CLIENT_NAME} does not handle {message.method}"
            )
            await self._send(_ErrorResponse(id=message.id, error=not_found))

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
