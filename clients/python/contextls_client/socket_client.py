"""The CLI's client for a session on the daemon: blocking I/O on its Unix socket.

A CLI command sends a handful of requests one after another, so it needs no
event loop. Its methods are coroutines only so that the command handlers
(written for ``lsp_client``, which spawns a server and is asyncio) run
unchanged: ``run_blocking`` drives them, and none of them ever suspends.
Importing asyncio alone costs a CLI command ~30 ms, as much as the rest of
a warm command.
"""

from __future__ import annotations

import itertools
import os
import socket
from collections.abc import Coroutine, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import msgspec

from contextls.common.places import peer_uid
from contextls.protocol import DidEvictParams, Notification, Request, Status, Wire
from contextls.protocol.framing import FramingError, MessageReader, frame
from contextls_client.messages import (
    ContextlsError,
    ReceivedNotification,
    ServerGoneError,
    _Incoming,
    _NotificationOut,
    _or_unset,
    _Request,
    _Response,
    initialize_params,
)

T = TypeVar("T")
ResultT = TypeVar("ResultT")
P = TypeVar("P", bound=Wire)
R = TypeVar("R", bound=Wire)


def run_blocking(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends (it awaits only this module's clients)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise RuntimeError("a CLI command waited on an event loop while talking to the daemon")


class _Stream:
    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def read1(self, size: int = 65536, /) -> bytes:
        return self._sock.recv(size)


class DaemonClient:
    """One LSP session on the user's daemon, for one CLI command."""

    def __init__(
        self,
        socket_path: Path,
        request_timeout: float = 120.0,
        connected: socket.socket | None = None,
    ) -> None:
        """``connected``: a connection already made to ``socket_path`` (see ``daemon``)."""
        self.socket = socket_path
        self.request_timeout = request_timeout
        self._connected = connected
        self.notifications: list[ReceivedNotification] = []
        self.server_capabilities: dict[str, Any] = {}
        self._sock: socket.socket | None = None
        self._messages = MessageReader()
        self._ids = itertools.count(1)

    async def start(self) -> None:
        if self._sock is not None:
            return  # already connected (asked the daemon's version first, say)
        if self._connected is not None:
            self._sock, self._connected = self._connected, None
            self._sock.settimeout(self.request_timeout)
            return
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.request_timeout)
        try:
            sock.connect(str(self.socket))
        except OSError as error:
            sock.close()
            raise ServerGoneError(
                f"cannot connect to the daemon at {self.socket}: {error}"
            ) from error
        if peer_uid(sock) != os.getuid():
            sock.close()
            raise ServerGoneError(f"{self.socket} is served by another user; not talking to it")
        self._sock = sock

    async def initialize(
        self, root: str | os.PathLike[str], options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        result = await self.request(
            "initialize", initialize_params(root, options or {}), dict[str, Any]
        )
        self.server_capabilities = result.get("capabilities", {})
        await self.notify("initialized", {})
        return self.server_capabilities

    async def shutdown(self, timeout: float = 10.0) -> None:
        """End the session (``shutdown``, ``exit``); the daemon goes on."""
        if self._sock is None:
            return
        try:
            self._sock.settimeout(timeout)
            await self.request("shutdown", None, None)
            await self.notify("exit", None)
        except (ServerGoneError, ContextlsError, OSError):
            pass
        await self.close()

    async def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    async def __aenter__(self) -> DaemonClient:
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

    # ------------------------------------------------------------------ messages

    async def call(self, request: Request[P, R], params: P, *, timeout: float | None = None) -> R:
        return await self.request(request.method, params, request.result)

    async def request(
        self,
        method: str,
        params: msgspec.Struct | Mapping[str, Any] | None,
        result_type: type[ResultT] | None,
        *,
        timeout: float | None = None,
    ) -> ResultT:
        request_id = next(self._ids)
        self._send(_Request(id=request_id, method=method, params=_or_unset(params)))
        while True:
            message = self._receive(method)
            if message.method is not None:
                if message.id is not None:  # a request to the client: nothing to offer
                    self._send(_Response(id=message.id, result=None))
                else:
                    self.notifications.append(ReceivedNotification(message.method, message.params))
                continue
            if message.id != request_id:
                continue
            if message.error is not None:
                error = message.error
                raise ContextlsError(error.code, error.message, error.data)
            try:
                return msgspec.json.decode(message.result or b"null", type=result_type)  # type: ignore[arg-type]
            except msgspec.ValidationError as error:
                raise ServerGoneError(
                    f"the daemon's answer to {method} does not match the protocol: {error}"
                ) from error

    async def notify(self, method: str, params: msgspec.Struct | Mapping[str, Any] | None) -> None:
        self._send(_NotificationOut(method=method, params=_or_unset(params)))

    def evictions(self) -> list[DidEvictParams]:
        return [
            note.decode(DidEvictParams)
            for note in self.notifications
            if note.method == Notification.DID_EVICT
        ]

    @property
    def latest_status(self) -> Status | None:
        for note in reversed(self.notifications):
            if note.method == Notification.DID_CHANGE_STATUS:
                return note.decode(Status)
        return None

    # ----------------------------------------------------------------- internals

    def _send(self, message: msgspec.Struct) -> None:
        if self._sock is None:
            raise ServerGoneError("not connected to the daemon")
        try:
            self._sock.sendall(frame(msgspec.json.encode(message)))
        except OSError as error:
            raise ServerGoneError(f"the daemon closed the connection ({error})") from error

    def _receive(self, method: str) -> _Incoming:
        assert self._sock is not None
        try:
            body = self._messages.read(_Stream(self._sock))
        except TimeoutError as error:
            raise ServerGoneError(f"no answer to {method} from the daemon in time") from error
        except (OSError, FramingError) as error:
            raise ServerGoneError(f"the daemon broke the connection ({error})") from error
        if body is None:
            raise ServerGoneError(f"the daemon closed the connection before answering {method}")
        return msgspec.json.decode(body, type=_Incoming)
