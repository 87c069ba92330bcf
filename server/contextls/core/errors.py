"""Domain errors: each carries a protocol error code and a message a person can act on."""

from __future__ import annotations

from typing import Any, Final

from contextls.protocol import ErrorCode


class ContextError(Exception):
    """A request the window refuses. Raised before any state changes.

    ``data``: what a client can act on besides the words (``protocol.ERROR_DATA``).
    """

    code: ErrorCode = ErrorCode.INVALID_PARAMS

    def __init__(self, message: str, code: ErrorCode | None = None, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        if code is not None:
            self.code = code


class ItemTooLarge(ContextError):
    code = ErrorCode.ITEM_TOO_LARGE


class NoRoom(ContextError):
    code = ErrorCode.NO_ROOM


class NeedsForce(ContextError):
    code = ErrorCode.NEEDS_FORCE


class UnknownItem(ContextError):
    code = ErrorCode.UNKNOWN_ITEM


class NotArchived(ContextError):
    code = ErrorCode.NOT_ARCHIVED


class InvalidParams(ContextError):
    """Params that decode but make no sense, e.g. a range that ends before it starts.

    ``path`` names the offending field the way msgspec does (``$.range.end``).
    """

    code = ErrorCode.INVALID_PARAMS

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{message} - at `{path}`")
        self.path = path


ECHOED: Final = 200
"""Characters of a person's input an error message repeats (a 100 KB path is not news)."""


def cut(text: str, limit: int = ECHOED) -> str:
    """``text`` as an error message may echo it: at most ``limit`` characters, and says
    how long it was when cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def thousands(n: int) -> str:
    """12345 -> '12,345', for messages people read."""
    return f"{n:,}"
