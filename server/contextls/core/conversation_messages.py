"""A conversation's messages: checked as a request gives them, and their tokens estimated."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from contextls.core.errors import InvalidParams

Message = dict[str, Any]
"""A chat message: ``{"role": str, "content": str | list[block], ...}``."""

CountText = Callable[[str], int]
"""Counts the tokens of a piece of text (tiktoken in the server)."""

IMAGE_WITHOUT_DATA_TOKENS: Final = 300
"""Estimate for an image block without base64 data (a URL image, say).

Its JSON text would be a handful of tokens while the model will charge
hundreds, so, like Roo Code, we guess high rather than low."""


class ConversationParamsError(InvalidParams):
    """A malformed request value; ``path`` names it as msgspec does
    (``$.messages[2].content``), so decode errors and ours read alike.

    It is an ``InvalidParams``, which the LSP layer maps to JSON-RPC
    ``-32602``.
    """


# --------------------------------------------------------------------------
# Token estimates
# --------------------------------------------------------------------------


def estimate_content_tokens(content: object, count_text: CountText) -> int:
    """Estimate the tokens of a message's content.

    ``content`` is a string or a list of Anthropic-style blocks:

    * ``text`` blocks count their text with ``count_text``;
    * ``image`` blocks count ``ceil(sqrt(len(source.data))) * 1.5`` (Roo's
      heuristic: 1000 bytes of base64 -> 32 * 1.5 = 48); an image without
      base64 data counts ``IMAGE_WITHOUT_DATA_TOKENS``;
    * anything else (unknown block types, malformed blocks) counts the tokens
      of its JSON text, so it is never free and never crashes.

    The image terms are halves, as in Roo; we sum them exactly and round the
    total up once at the end (two 10-byte images: 6 + 6 = 12; one 5-byte
    image: 4.5 -> 5), so an estimate never rounds down to less than Roo's.
    Empty content is 0.
    """
    if content is None:
        return 0
    if isinstance(content, str):
        return count_text(content) if content else 0
    if not isinstance(content, list):
        return count_text(_json_text(content))
    total = 0.0
    for block in content:
        total += _block_tokens(block, count_text)
    return math.ceil(total)


def _block_tokens(block: object, count_text: CountText) -> float:
    """One content block's estimate (a float: image estimates are halves)."""
    if isinstance(block, dict):
        kind = block.get("type")
        text = block.get("text")
        if kind == "text" and isinstance(text, str):
            return count_text(text)
        if kind == "image":
            return _image_tokens(block)
    return count_text(_json_text(block))


def _image_tokens(block: Mapping[str, Any]) -> float:
    source = block.get("source")
    data = source.get("data") if isinstance(source, dict) else None
    if not isinstance(data, str):
        return IMAGE_WITHOUT_DATA_TOKENS
    return math.ceil(math.sqrt(len(data))) * 1.5


def _json_text(value: object) -> str:
    """Stable JSON text of any value; falls back to ``repr`` if not JSON-able."""
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        # Mixed-type dict keys cannot be sorted; circular data cannot be dumped.
        return repr(value)


def _messages_tokens(messages: Sequence[Message], count_text: CountText) -> int:
    return sum(estimate_content_tokens(m.get("content"), count_text) for m in messages)


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------


def validate_messages(messages: object) -> list[Message]:
    """Check the shape this module relies on; raise with the bad field's path."""
    if not isinstance(messages, list):
        raise ConversationParamsError(
            "$.messages", f"expected an array of messages, got {_kind(messages)}"
        )
    for i, message in enumerate(messages):
        path = f"$.messages[{i}]"
        if not isinstance(message, dict):
            raise ConversationParamsError(
                path, f"expected an object {{role, content}}, got {_kind(message)}"
            )
        for key in ("role", "content"):
            if key not in message:
                raise ConversationParamsError(f"{path}.{key}", "is required")
        role = message["role"]
        if not isinstance(role, str):
            raise ConversationParamsError(f"{path}.role", f"expected a string, got {_kind(role)}")
        content = message["content"]
        if not isinstance(content, str | list):
            raise ConversationParamsError(
                f"{path}.content",
                f"expected a string or an array of content blocks, got {_kind(content)}",
            )
    return messages


def _kind(value: object) -> str:
    """A JSON-ish name for a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _validate_numbers(context_window: int, total_tokens: int | None) -> None:
    if isinstance(context_window, bool) or not context_window > 0:
        raise ConversationParamsError("$.contextWindow", "must be a number greater than 0")
    if total_tokens is not None and not total_tokens >= 0:
        raise ConversationParamsError("$.totalTokens", "must not be negative")
