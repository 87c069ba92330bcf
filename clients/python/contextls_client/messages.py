"""What every client of the Python clients says of the server: the errors a request ends
in, the notifications it keeps. The conversation itself is ``rpc``.

Light on purpose: the daemon path of every CLI command imports it, never asyncio.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

import msgspec

from contextls.protocol import ErrorCode
from contextls_client.names import CLIENT_NAME as CLIENT_NAME
from contextls_client.names import JSONRPC_VERSION as JSONRPC_VERSION

ResultT = TypeVar("ResultT")



class ContextlsError(Exception):
    """The server answered a request with a JSON-RPC error.

    ``code`` is one of :class:`contextls.protocol.ErrorCode` for domain errors
    (a refusal such as a binary file or an item over budget) and ``message`` is
    the server's explanation, written for a person.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    @property
    def error_code(self) -> ErrorCode | None:
        """The code as a protocol enum member, or ``None`` for codes outside it."""
        try:
            return ErrorCode(self.code)
        except ValueError:
            return None

    def __str__(self) -> str:
        return self.message


class NotUtf8(Exception):
    """Text the protocol cannot carry (JSON is UTF-8): a folder's name, words given on the
    command line that are not UTF-8; exit code 1, said in words."""


def printable(text: str) -> str:
    """``text`` with the bytes that are not UTF-8 written as ``\\xff`` (so it can be said,
    in JSON too)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


class ServerGoneError(Exception):
    """The server process exited, hung, or broke the framing; no answer will come."""

    def __init__(self, reason: str, stderr_tail: str = "") -> None:
        detail = (
            f"{reason}\n--- server stderr (last lines) ---\n{stderr_tail}"
            if stderr_tail
            else reason
        )
        super().__init__(detail)
        self.reason = reason
        self.stderr_tail = stderr_tail


class ReceivedNotification(msgspec.Struct, frozen=True):
    """A notification from the server, its params kept as raw JSON until asked for."""

    method: str
    params: msgspec.Raw

    def decode(self, params_type: type[ResultT]) -> ResultT:
        """Decode the params into a protocol Struct (or any msgspec type)."""
        return msgspec.json.decode(self.params or b"null", type=params_type)


def shown_messages(notifications: Iterable[ReceivedNotification]) -> list[str]:
    """The texts of the ``window/showMessage`` notifications among ``notifications``."""
    texts = []
    for note in notifications:
        if note.method == "window/showMessage":
            message = note.decode(dict).get("message")
            if isinstance(message, str):
                texts.append(message)
    return texts
