"""The error codes of contextls's answers, and the ``data`` some of them carry."""

from __future__ import annotations

from enum import IntEnum
from typing import Final, Literal

from contextls.protocol.results import AddFilesResult, ConfigureResult, SkippedFile
from contextls.protocol.status import RefusedFolder
from contextls.protocol.structure import AmbiguousSymbolData
from contextls.protocol.wire import Wire

__all__ = ["ERROR_DATA", "ErrorCode", "InvalidParamsData", "NoRoomData", "NoWorkspaceData"]


class ErrorCode(IntEnum):
    """JSON-RPC error codes of contextls's answers.

    ``INVALID_PARAMS`` is JSON-RPC's own (-32602, lsprotocol's
    ``ErrorCodes.InvalidParams``; a test checks they agree). The domain codes
    live in -31099..-31001, outside both ranges JSON-RPC and LSP reserve
    (-32768..-32000 and -32899..-32800), so no client mistakes them for a
    protocol failure. Clients match on the names, which the schema carries
    under ``x-errorCodes``.
    """

    INVALID_PARAMS = -32602
    NO_WORKSPACE = -31001
    OUTSIDE_WORKSPACE = -31002
    FILE_NOT_FOUND = -31003
    BINARY_FILE = -31004
    FILE_TOO_LARGE = -31005
    ITEM_TOO_LARGE = -31006
    NO_ROOM = -31007
    UNKNOWN_ITEM = -31008
    NOT_ARCHIVED = -31009
    INVALID_RANGE = -31010
    STORAGE = -31011
    CONDENSE = -31012
    NEEDS_FORCE = -31013
    """A bulk add, or a change of settings, would evict more than half of the window;
    ``data`` is the request's planned result (``AddFilesResult`` or ``ConfigureResult``),
    which says what would go. Ask the person, then send it again with ``force``."""
    SYMBOL_NOT_FOUND = -31014
    """No definition has the name asked for; the message names the nearest ones."""
    AMBIGUOUS_SYMBOL = -31015
    """The name fits more than one definition; ``data`` lists them."""
    NO_STRUCTURE = -31016
    """The file's language is not parsed here: add a range instead."""
    SECRET_FILE = -31017
    """An agent's client (``AGENT_CLIENTS``) named a file whose name says it holds secrets
    (``.env``, keys); only a person adds it, by naming it."""


class InvalidParamsData(Wire):
    """``data`` of INVALID_PARAMS: the field and the rule it broke, for a client to say
    in its own words (the message is the server's)."""

    field: str
    """The JSON path of the field (``$.settings.maxTokens``; ``$`` for the params)."""
    rule: Literal[
        "type",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "value",
        "unknownField",
        "required",
        "invalid",
    ]
    """What the field broke: its type (``expected``), a bound (``bound``), a value not
    among those allowed, a field the method does not take, a field it needs, or a rule of
    the request's own (``invalid``: the message says which)."""
    bound: float | None = None
    """The bound of ``minimum``/``maximum`` and of ``minLength``/``maxLength``."""
    expected: str | None = None
    """The type the field takes (``int``, ``str``, ``array``, ``object``…)."""


class NoWorkspaceData(Wire):
    """``data`` of NO_WORKSPACE: the folders given and refused (empty when none was)."""

    refused: list[RefusedFolder] = []


class NoRoomData(Wire):
    """``data`` of a bulk add refused for NO_ROOM: the figures."""

    tokens: int
    """The tokens the set takes."""
    items: int
    """The items the set would be."""
    available_tokens: int
    """What the budget leaves beside the pinned items."""
    available_items: int
    short_tokens: int
    """By how many tokens it misses (0: it misses by items only)."""
    short_items: int
    skipped: list[SkippedFile] = []
    """What the folders and globs left out besides (as a successful add would say)."""


ERROR_DATA: Final[dict[ErrorCode, type[Wire] | tuple[type[Wire], ...]]] = {
    ErrorCode.INVALID_PARAMS: InvalidParamsData,
    ErrorCode.NO_WORKSPACE: NoWorkspaceData,
    ErrorCode.NO_ROOM: NoRoomData,
    ErrorCode.NEEDS_FORCE: (AddFilesResult, ConfigureResult),
    ErrorCode.AMBIGUOUS_SYMBOL: AmbiguousSymbolData,
}
"""The ``data`` an error carries, where it carries one (``NO_ROOM`` only from a bulk add);
several types: the one of the request refused."""
