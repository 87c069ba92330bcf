"""Token counts in the tokenizer of the model a window is for.

The core only counts: how a tokenizer is loaded (offline, from the files a package ships)
is ``contextls.app.tokenizers``'s job, handed in as ``load``. Nothing is loaded at start-up:
the first ``count`` pays for it (~0.1-1 s), which keeps the server's cold start at the
pygls floor.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final, Protocol

from contextls.core.models import TOKENIZERS, TokenizerSpec
from contextls.protocol import ENCODINGS, Settings

DEFAULT_ENCODING: Final = Settings().encoding

PIECES_KEPT: Final = 4_000_000
"""Characters of counted texts remembered (about a million tokens: a few renders of the
largest window), the least recently used forgotten first."""


class Counter(Protocol):
    """One tokenizer, loaded."""

    @property
    def additive(self) -> bool:
        """Texts cut where ``core.render`` cuts them count as much as the whole."""
        ...

    def count(self, text: str) -> int: ...


LoadCounter = Callable[[str], Counter]


class Tokenizer:
    """Counts tokens of one encoding; it loads on the first count, and a text counted once
    is not counted again while it is remembered (an item is counted once per model, so a
    window that goes back to a model it had costs nothing)."""

    def __init__(self, encoding: str, load: LoadCounter) -> None:
        if encoding not in ENCODINGS:
            raise ValueError(f"unknown encoding {encoding!r}; use one of {', '.join(ENCODINGS)}")
        self.encoding = encoding
        self.spec: TokenizerSpec = TOKENIZERS[encoding]
        self._load = load
        self._counter: Counter | None = None
        self._seen: dict[str, int] = {}
        self._seen_size = 0
        self._lock = threading.Lock()
        """Around what it remembers: a change of model counts a window in a worker thread
        while requests count on the server's."""
        self._known: Mapping[str, int] = {}
        """Counts made elsewhere and looked up first (``consulting``)."""

    @property
    def loaded(self) -> bool:
        return self._counter is not None

    def load(self) -> None:
        """Load the tokenizer now (a change does it before it takes the write lock)."""
        if self._counter is None:
            with self._lock:
                if self._counter is None:
                    self._counter = self._load(self.encoding)

    def count(self, text: str) -> int:
        if not text:
            return 0
        tokens = self._known.get(text)
        if tokens is None:
            tokens = self._seen.get(text)
        if tokens is None:
            tokens = self._count(text)
            self._remember(text, tokens)
        return tokens

    @contextlib.contextmanager
    def consulting(self, counts: Mapping[str, int]) -> Iterator[None]:
        """Take ``counts`` (texts counted in this encoding, in a worker thread) as known
        while inside: an add of a folder counts its files before it takes the write lock,
        more text than the tokenizer remembers (a folder of 7 MB was counted again on the
        event loop, every client waiting ~1 s)."""
        # Merged with any made for another request meanwhile (an import steps between
        # other requests): every count here is exact, whoever made it.
        before = self._known
        self._known = {**before, **counts} if before else counts
        try:
            yield
        finally:
            self._known = before

    def _count(self, text: str) -> int:
        self.load()
        assert self._counter is not None
        return self._counter.count(text)

    def count_pieces(self, pieces: Sequence[str]) -> int:
        """The count of ``"".join(pieces)``, counting only pieces not seen lately.

        Piece by piece only where the tokenizer is additive: tiktoken's pre-tokenizer splits
        the joined text at every seam ``core.render`` cuts at (before a line that starts with
        ``#`` or ``<`` in o200k and cl100k). Any other tokenizer counts the joined text.
        """
        self.load()
        assert self._counter is not None
        if not self._counter.additive:
            return self.count("".join(pieces))
        seen = self._seen
        total = 0
        for piece in pieces:
            with self._lock:
                tokens = seen.pop(piece, None)
                if tokens is not None:
                    seen[piece] = tokens  # the most recently used last
            if tokens is None:
                tokens = self.count(piece)  # remembered as the most recently used
            total += tokens
        return total

    def _remember(self, text: str, tokens: int) -> None:
        with self._lock:
            if text not in self._seen:
                self._seen_size += len(text)
            self._seen[text] = tokens
            self._forget()

    def _forget(self) -> None:
        seen = self._seen
        while self._seen_size > PIECES_KEPT and seen:
            oldest = next(iter(seen))
            del seen[oldest]
            self._seen_size -= len(oldest)


class Estimate:
    """Another tokenizer's count times a measured ratio, rounded up (never additive: the
    rounding is of the whole)."""

    additive = False

    def __init__(self, base: Tokenizer, ratio: float) -> None:
        self.base = base
        self.ratio = ratio

    def count(self, text: str) -> int:
        return math.ceil(self.base.count(text) * self.ratio)
