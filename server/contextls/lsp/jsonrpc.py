"""The one place where errors become JSON-RPC errors."""

from __future__ import annotations

import logging
from typing import Any, TypeVar

import msgspec
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
)

from contextls.core.errors import ContextError, cut
from contextls.protocol import ErrorCode

log = logging.getLogger(__name__)

S = TypeVar("S", bound=msgspec.Struct)


def decode_params(raw: Any, params_type: type[S]) -> S:
    """Dict params -> the method's Struct, or -32602 naming the bad field."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise JsonRpcInvalidParams(message="params must be an object (by-name parameters)")
    try:
        return msgspec.convert(raw, params_type)
    except msgspec.ValidationError as error:
        raise JsonRpcInvalidParams(message=f"invalid params: {error}") from None


MESSAGE_LIMIT = 1000
"""The longest error message sent: whatever a message quotes, a model reading it pays for
every character (a 100 KB path came back whole)."""


def to_jsonrpc(error: BaseException) -> JsonRpcException:
    if isinstance(error, JsonRpcException):
        return error
    if isinstance(error, ContextError):
        error.message = cut(error.message, MESSAGE_LIMIT)
        if error.code == ErrorCode.INVALID_PARAMS:
            return JsonRpcInvalidParams(message=f"invalid params: {error.message}")
        # pygls' JsonRpcServerError insists on -32099..-32000, the very range
        # our codes keep out of (see ``ErrorCode``).
        data = msgspec.to_builtins(error.data) if error.data is not None else None
        return JsonRpcException(message=error.message, code=int(error.code), data=data)
    log.exception("internal error", exc_info=error)
    # The details (and any local path in them) go to the log, not to the client.
    return JsonRpcInternalError(
        message=f"internal error ({type(error).__name__}); the server's log has the details"
    )
