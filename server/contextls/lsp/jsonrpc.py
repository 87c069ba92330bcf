"""The one place where errors become JSON-RPC errors."""

from __future__ import annotations

import logging
import re
from typing import Any, Final, Literal, TypeVar

import msgspec
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
)

from contextls.core.errors import ContextError, cut
from contextls.protocol import ErrorCode, InvalidParamsData

log = logging.getLogger(__name__)

S = TypeVar("S", bound=msgspec.Struct)


def decode_params(raw: Any, params_type: type[S]) -> S:
    """Dict params -> the method's Struct, or -32602 naming the bad field."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise JsonRpcInvalidParams(
            message="params must be an object (by-name parameters)",
            data=msgspec.to_builtins(InvalidParamsData(field="$", rule="type", expected="object")),
        )
    try:
        return msgspec.convert(raw, params_type)
    except msgspec.ValidationError as error:
        raise JsonRpcInvalidParams(
            message=f"invalid params: {error}", data=msgspec.to_builtins(_where(str(error)))
        ) from None


Rule = Literal[
    "type", "minimum", "maximum", "minLength", "maxLength", "value", "unknownField", "required"
]
_RULES: Final[tuple[tuple[re.Pattern[str], Rule], ...]] = (
    (re.compile(r"Expected `(?P<type>[a-z]+)` >= (?P<bound>[0-9.e+-]+)"), "minimum"),
    (re.compile(r"Expected `(?P<type>[a-z]+)` <= (?P<bound>[0-9.e+-]+)"), "maximum"),
    (re.compile(r"Expected `(?P<type>[a-z]+)` of length >= (?P<bound>[0-9]+)"), "minLength"),
    (re.compile(r"Expected `(?P<type>[a-z]+)` of length <= (?P<bound>[0-9]+)"), "maxLength"),
    (re.compile(r"Expected `(?P<type>[a-z]+)(?: \| null)?`, got `[a-z]+`"), "type"),
    (re.compile(r"Invalid enum value .*"), "value"),
    (re.compile(r"Object contains unknown field `(?P<name>[^`]*)`"), "unknownField"),
    (re.compile(r"Object missing required field `(?P<name>[^`]*)`"), "required"),
)


def _where(said: str) -> InvalidParamsData:
    """msgspec's words (``Expected `int` >= 1 - at `$.maxTokens```) as data: read here,
    once, so that no client reads them."""
    rule_text, sep, at = said.rpartition(" - at `")
    field = at.removesuffix("`") if sep else "$"
    if not sep:
        rule_text = said
    for pattern, rule in _RULES:
        match = pattern.fullmatch(rule_text)
        if match is None:
            continue
        found = match.groupdict()
        if found.get("name") is not None:
            field = f"{field}.{found['name']}"
        bound = float(found["bound"]) if found.get("bound") else None
        return InvalidParamsData(
            field=field,
            rule=rule,
            bound=bound,
            expected=found.get("type"),  # type: ignore[arg-type]
        )
    return InvalidParamsData(field=field, rule="invalid")


MESSAGE_LIMIT = 1000
"""The longest error message sent: whatever a message quotes, a model reading it pays for
every character (a 100 KB path came back whole)."""


def to_jsonrpc(error: BaseException) -> JsonRpcException:
    if isinstance(error, JsonRpcException):
        return error
    if isinstance(error, ContextError):
        error.message = cut(error.message, MESSAGE_LIMIT)
        if error.code == ErrorCode.INVALID_PARAMS:
            said = InvalidParamsData(field=getattr(error, "path", "$"), rule="invalid")
            return JsonRpcInvalidParams(
                message=f"invalid params: {error.message}", data=msgspec.to_builtins(said)
            )
        # pygls' JsonRpcServerError insists on -32099..-32000, the very range
        # our codes keep out of (see ``ErrorCode``).
        data = msgspec.to_builtins(error.data) if error.data is not None else None
        return JsonRpcException(message=error.message, code=int(error.code), data=data)
    log.exception("internal error", exc_info=error)
    # The details (and any local path in them) go to the log, not to the client.
    return JsonRpcInternalError(
        message=f"internal error ({type(error).__name__}); the server's log has the details"
    )
