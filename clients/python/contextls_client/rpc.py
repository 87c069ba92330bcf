"""The one JSON-RPC client of the Python clients, without I/O (sans-IO).

A :class:`RpcConnection` turns requests and notifications into framed bytes to send
(:meth:`RpcConnection.data_to_send`) and received bytes into answers
(:meth:`RpcConnection.receive` returns them), keeping the server's notifications and
answering the requests a server sends a plain client. It reads and writes nothing:
``socket_client`` drives it with blocking calls (the CLI), ``lsp_client`` with asyncio
(MCP, the library). Light on purpose (no asyncio): every CLI command imports it.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, TypeVar

import msgspec

from contextls.protocol import DidEvictParams, Notification, Status
from contextls.protocol.framing import FrameParser, FramingError, frame
from contextls_client.messages import (
    CLIENT_NAME,
    JSONRPC_VERSION,
    ContextlsError,
    NotUtf8,
    ReceivedNotification,
    ServerGoneError,
    printable,
)

ResultT = TypeVar("ResultT")

METHOD_NOT_FOUND: Final = -32601
"""JSON-RPC's code (lsprotocol's ErrorCodes.MethodNotFound; not imported: it is slow to load)."""
ANSWERED_WITH_NULL: Final = frozenset(
    {
        "client/registerCapability",
        "client/unregisterCapability",
        "window/workDoneProgress/create",
        "window/showMessageRequest",
    }
)
"""Requests a server may send a plain client, answered with nothing to offer."""


class _ResponseError(msgspec.Struct):
    code: int
    message: str
    data: Any = None


class _Incoming(msgspec.Struct):
    """Any message from the server; which fields are present says what it is."""

    id: int | str | None = None
    method: str | None = None
    params: msgspec.Raw = msgspec.Raw(b"")
    result: msgspec.Raw = msgspec.Raw(b"")
    error: _ResponseError | None = None


class _Request(msgspec.Struct, kw_only=True):
    jsonrpc: str = JSONRPC_VERSION
    id: int
    method: str
    params: Any = msgspec.UNSET
    """Left out of the message when there are none, as JSON-RPC asks (not ``null``)."""


class _NotificationOut(msgspec.Struct, kw_only=True):
    jsonrpc: str = JSONRPC_VERSION
    method: str
    params: Any = msgspec.UNSET


class _Response(msgspec.Struct, kw_only=True):
    jsonrpc: str = JSONRPC_VERSION
    id: int | str | None
    result: Any


class _ErrorResponse(msgspec.Struct, kw_only=True):
    jsonrpc: str = JSONRPC_VERSION
    id: int | str | None
    error: _ResponseError


class Answer(msgspec.Struct, frozen=True):
    """The server's answer to request ``id``: its raw result, or its error."""

    id: int
    result: msgspec.Raw
    error: ContextlsError | None = None

    def decode(self, result_type: type[ResultT] | None, method: str) -> ResultT:
        """The result as ``result_type``; the error raised; a result off the protocol is a
        server that cannot be trusted to answer (``ServerGoneError``)."""
        if self.error is not None:
            raise self.error
        try:
            return msgspec.json.decode(self.result or b"null", type=result_type)  # type: ignore[arg-type]
        except msgspec.ValidationError as error:
            raise ServerGoneError(
                f"the answer to {method} does not match the protocol: {error}"
            ) from error


NotificationHandler = Callable[[ReceivedNotification], None]


def _params(params: object) -> object:
    return msgspec.UNSET if params is None else params


class RpcConnection:
    """One client's side of a JSON-RPC 2.0 conversation over LSP frames, as data."""

    def __init__(self, client_name: str = CLIENT_NAME) -> None:
        self.client_name = client_name
        self.settings: dict[str, Any] = {}
        """What ``workspace/configuration`` is answered with (``initializationOptions``)."""
        self.notifications: list[ReceivedNotification] = []
        self.handlers: list[NotificationHandler] = []
        """Called with every notification as it is received."""
        self._ids = itertools.count(1)
        self._outgoing = bytearray()
        self._answers: list[Answer] = []
        self._broken: str | None = None
        self._parser = FrameParser(self._body, self._framing_error)

    # ------------------------------------------------------------------ sending

    def request(self, method: str, params: msgspec.Struct | Mapping[str, Any] | None) -> int:
        """Queue a request; returns its id, which its :class:`Answer` carries."""
        request_id = next(self._ids)
        self._queue(_Request(id=request_id, method=method, params=_params(params)))
        return request_id

    def notify(self, method: str, params: msgspec.Struct | Mapping[str, Any] | None) -> None:
        self._queue(_NotificationOut(method=method, params=_params(params)))

    def initialize(self, root: str | os.PathLike[str], options: Mapping[str, Any]) -> int:
        """Queue ``initialize`` for the one workspace folder ``root``; its settings answer
        ``workspace/configuration`` from then on."""
        self.settings = dict(options)
        root_path = Path(root).resolve()
        root_uri = root_path.as_uri()
        return self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "clientInfo": {"name": self.client_name},
                "rootUri": root_uri,
                "rootPath": str(root_path),
                "workspaceFolders": [{"uri": root_uri, "name": root_path.name or root_uri}],
                "capabilities": {"workspace": {"workspaceFolders": True}},
                "initializationOptions": self.settings,
            },
        )

    def data_to_send(self) -> bytes:
        """Every frame queued since the last call, in order."""
        data = bytes(self._outgoing)
        self._outgoing.clear()
        return data

    # ---------------------------------------------------------------- receiving

    def receive(self, data: bytes) -> list[Answer]:
        """Take bytes the server sent; returns the answers they completed, in order.
        Notifications are kept (and handed to ``handlers``); a server's request is
        answered (see :meth:`data_to_send`)."""
        if self._broken is None:
            self._parser.feed(data)
        if self._broken is not None:
            raise ServerGoneError(f"the server broke the protocol: {self._broken}")
        answers, self._answers = self._answers, []
        return answers

    def end_of_input(self) -> str:
        """The server closed its side: why nothing more will come."""
        if self._parser.inside_a_message or self._parser.buffered:
            return "the server closed the connection inside a message"
        return "the server closed the connection"

    def evictions(self) -> list[DidEvictParams]:
        """Every ``contextls/didEvict`` received so far, decoded."""
        return [
            note.decode(DidEvictParams)
            for note in self.notifications
            if note.method == Notification.DID_EVICT
        ]

    @property
    def latest_status(self) -> Status | None:
        """The last ``contextls/didChangeStatus`` pushed, if any."""
        for note in reversed(self.notifications):
            if note.method == Notification.DID_CHANGE_STATUS:
                return note.decode(Status)
        return None

    # ----------------------------------------------------------------- internals

    def _queue(self, message: msgspec.Struct) -> None:
        try:
            body = msgspec.json.encode(message)
        except UnicodeEncodeError as error:
            text = error.object if isinstance(error.object, str) else ""
            around = printable(text[max(error.start - 40, 0) : error.end + 40])
            raise NotUtf8(
                f"'{around}' is not UTF-8 text, which the protocol cannot carry"
            ) from None
        self._outgoing += frame(body)

    def _framing_error(self, problem: str) -> None:
        self._broken = problem

    def _body(self, body: bytes) -> None:
        try:
            message = msgspec.json.decode(body, type=_Incoming)
        except msgspec.DecodeError as error:
            self._broken = str(error)
            return
        if message.method is not None and message.id is not None:
            self._answer_server_request(message)
        elif message.method is not None:
            note = ReceivedNotification(message.method, message.params)
            self.notifications.append(note)
            for handler in self.handlers:
                handler(note)
        elif isinstance(message.id, int):
            said = message.error
            refused = ContextlsError(said.code, said.message, said.data) if said else None
            self._answers.append(Answer(message.id, message.result, refused))

    def _answer_server_request(self, message: _Incoming) -> None:
        if message.method == "workspace/configuration":
            asked = msgspec.json.decode(message.params or b"{}", type=dict[str, Any])
            items = asked.get("items", [])
            self._queue(_Response(id=message.id, result=[self.settings for _ in items]))
        elif message.method in ANSWERED_WITH_NULL:
            self._queue(_Response(id=message.id, result=None))
        else:
            not_found = _ResponseError(
                METHOD_NOT_FOUND, f"{self.client_name} does not handle {message.method}"
            )
            self._queue(_ErrorResponse(id=message.id, error=not_found))


__all__ = ["Answer", "FramingError", "NotificationHandler", "RpcConnection"]
