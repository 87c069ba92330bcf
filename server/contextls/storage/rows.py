"""Items to rows and back."""

from __future__ import annotations

import hashlib
from typing import Any, Final

import msgspec

from contextls.core.items import Item

ITEM_COLUMNS: Final = "id, kind, content, metadata, timestamp, tokens, encoding, pinned"


def to_json(value: dict[str, Any]) -> str:
    return msgspec.json.encode(value).decode()


def item_from_row(row: tuple[Any, ...], stale: bool = False, seq: int = 0) -> Item:
    """An item from the ``ITEM_COLUMNS`` of a row."""
    item_id, kind, content, metadata, timestamp, tokens, encoding, pinned = row
    return Item(
        id=item_id,
        kind=kind,
        content=content,
        metadata=msgspec.json.decode(metadata),
        timestamp=timestamp,
        tokens=tokens,
        pinned=bool(pinned),
        stale=stale,
        seq=seq,
        encoding=encoding,
    )


def text_digest(text: str) -> bytes:
    """What finds an archived copy of a text (16 bytes of BLAKE2b)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
