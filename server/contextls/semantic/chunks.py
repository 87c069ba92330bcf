"""Cut an item's word pieces into overlapping chunks; an item scores as its best chunk."""

from __future__ import annotations

from typing import Final

CHUNK_PIECES: Final = 254  # + [CLS] and [SEP] = the model's 256-piece chunk
OVERLAP: Final = 32  # so a sentence cut at a boundary is whole in one chunk


def chunk_ids(ids: list[int], size: int = CHUNK_PIECES, overlap: int = OVERLAP) -> list[list[int]]:
    """Windows of at most ``size`` ids, each sharing ``overlap`` ids with the previous.

    An empty list gives one empty chunk, so every item has a vector.
    """
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError("need size > 0 and 0 <= overlap < size")
    if len(ids) <= size:
        return [list(ids)]
    step = size - overlap
    chunks = []
    start = 0
    while True:
        chunks.append(ids[start : start + size])
        if start + size >= len(ids):
            return chunks
        start += step
