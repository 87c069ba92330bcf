"""Item ids on the command line: ``ctx-3``, or just ``3``."""

from __future__ import annotations

import re
from typing import Final

from contextls_client.session import UsageError

_ITEM_ID: Final = re.compile(r"^(?:ctx-)?([0-9]+)$")


def item_id(text: str) -> str:
    """Normalise ``3`` or ``ctx-3`` to ``ctx-3``."""
    match = _ITEM_ID.match(text.strip())
    if match is None:
        raise UsageError(f"{text!r} is not an item id (ids look like ctx-3)")
    return f"ctx-{int(match[1])}"


def item_ids(texts: list[str]) -> list[str]:
    return [item_id(text) for text in texts]
