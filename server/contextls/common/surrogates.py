"""Lone surrogates in JSON: an escape such as ``\\ud800`` that is half of a character.

JSON's grammar allows them, Unicode does not: msgspec (the server's decoder) and the MCP
SDK's parser refuse such a message, and a refusal that names nothing leaves a client
guessing (or, where the parser answers nothing, waiting for ever). Python's ``json``
reads them, so both ends can say which field holds one.
"""

from __future__ import annotations

import json
from typing import Any, Final

LONE_SURROGATE: Final = (
    "holds a lone surrogate (an escape such as \\ud800 that is half of a character): it is not text"
)


def lone_surrogate(value: Any, path: str = "$") -> str | None:
    """The JSON path of the first string (key or value) in ``value`` holding a lone
    surrogate, or None."""
    if isinstance(value, str):
        return path if any("\ud800" <= c <= "\udfff" for c in value) else None
    if isinstance(value, dict):
        for key, inner in value.items():
            if lone_surrogate(key, "") is not None:
                return f"{path} (a key)"
            found = lone_surrogate(inner, f"{path}.{key}")
            if found is not None:
                return found
    if isinstance(value, list):
        for index, inner in enumerate(value):
            found = lone_surrogate(inner, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def with_lone_surrogate(body: bytes | str) -> tuple[Any, str] | None:
    """A JSON message that holds a lone surrogate, read, and where; None for anything
    else (valid text, or not JSON at all)."""
    if isinstance(body, bytes) and b"\\u" not in body:
        return None
    if isinstance(body, str) and "\\u" not in body:
        return None
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    where = lone_surrogate(message)
    return None if where is None else (message, where)
