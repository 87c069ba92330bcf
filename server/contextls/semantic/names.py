"""What an item is embedded from: its text, each chunk headed by the names that say what
its code is.

MiniLM reads ``isWeekend`` as word pieces of no meaning (``is``, ``##we``, ``##eke``...)
and a chunk cut from the middle of a class as statements without their function. So a
chunk of code is headed by the words of its file's name, of the definitions it sits
in (their qualified names split into words, the innermost one's signature), and of
the definitions that start in it: "datetime · date time start of · DateTime.startOf
(unit, { useLocaleWeeks })". The definitions are the structure package's; text it
cannot parse (a note, an error, a language without a grammar here) is embedded as it
is. Measured on the tuning side of the third-party relevance set (``tests/bench/
README.md``): semantic recall@3 rose by a tenth.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Final

from contextls.semantic.chunks import CHUNK_PIECES, OVERLAP, chunk_ids
from contextls.storage.search_index import name_words

if TYPE_CHECKING:
    from contextls.semantic.model import Embedding

log = logging.getLogger(__name__)

HEAD_PIECES: Final = 48
"""Word pieces a chunk's heading may take of its 254."""
SIGNATURE_CHARS: Final = 160
_WORDS: Final = re.compile(r"[^\W_]+")
_PLAIN_STEMS: Final = frozenset({"__init__", "index", "mod", "lib", "main"})
"""File names that say nothing of what a file holds."""


@dataclass(frozen=True, slots=True)
class Definition:
    first: int
    last: int
    qualified: str
    signature: str


def words_of(name: str) -> str:
    """A name as words: ``DateTime.startOf`` -> "date time start of"."""
    out: list[str] = []
    for part in _WORDS.findall(name):
        out.extend(name_words(part) or [part.lower()])
    return " ".join(out)


def definitions(text: str, metadata: dict[str, Any]) -> list[Definition]:
    """The definitions of ``text`` by the structure package, or none when it cannot say."""
    from contextls.structure.languages import language_of
    from contextls.structure.symbols import symbols

    path = str(metadata.get("path") or "")
    language = language_of(path, metadata.get("language"))
    if language is None:
        return []
    try:
        found = symbols(text, language)
    except Exception:  # no grammar, brackets past the parser's budget: embedded as it is
        log.debug("no definitions for %s", path, exc_info=True)
        return []
    lines = text.splitlines()
    return [
        Definition(
            s.start_line,
            s.end_line,
            s.qualified,
            " ".join(lines[s.name_line - 1].split())[:SIGNATURE_CHARS]
            if 0 < s.name_line <= len(lines)
            else "",
        )
        for s in found
    ]


def heading(found: Sequence[Definition], first: int, last: int, path: str) -> str:
    """The names of the lines ``first``-``last``: the file's, the definitions holding
    them (the innermost one's signature), and those starting in them."""
    parts = []
    stem = PurePosixPath(path).stem if path else ""
    if stem and stem not in _PLAIN_STEMS:
        parts.append(words_of(stem))
    holding = [d for d in found if d.first < first <= d.last]
    if holding:
        parts.append(words_of(holding[-1].qualified))
        if holding[-1].signature:
            parts.append(holding[-1].signature)
    parts.extend(words_of(d.qualified) for d in found if first <= d.first <= last)
    return " · ".join(dict.fromkeys(p for p in parts if p))


class Headings:
    """``heading`` of each chunk of one text, asked in the order of the text: its holders
    found in one sweep over the definitions, those starting in it by bisection. A scan of
    every definition for every chunk takes 2.2 s of the GIL (in the embedding's thread,
    beside the loop answering everyone) for a file of 10,000 definitions in 1,700
    chunks. The same headings as ``heading``, which it falls back to when the
    definitions are not in the order of their first lines or a chunk starts before the
    one asked before it."""

    def __init__(self, found: Sequence[Definition], path: str) -> None:
        self.found = found
        self.path = path
        self.firsts = [definition.first for definition in found]
        self.ordered = all(a <= b for a, b in zip(self.firsts, self.firsts[1:], strict=False))
        stem = PurePosixPath(path).stem if path else ""
        self.stem = words_of(stem) if stem and stem not in _PLAIN_STEMS else ""
        self._words: dict[int, str] = {}
        self._next = 0
        """The first definition not yet known to start before the chunk asked."""
        self._open: list[int] = []
        """Definitions starting before the chunk asked, in their order; those at its end
        ending before it are let go as it is asked (a later chunk starts later still)."""
        self._asked = 0

    def of(self, first: int, last: int) -> str:
        if not self.ordered or first < self._asked:
            return heading(self.found, first, last, self.path)
        self._asked = first
        found, opened = self.found, self._open
        while self._next < len(found) and found[self._next].first < first:
            opened.append(self._next)
            self._next += 1
        while opened and found[opened[-1]].last < first:
            opened.pop()
        parts = [self.stem]
        if opened:
            parts.append(self._words_of(opened[-1]))
            parts.append(found[opened[-1]].signature)
        starting = range(
            bisect.bisect_left(self.firsts, first), bisect.bisect_right(self.firsts, last)
        )
        parts.extend(self._words_of(index) for index in starting)
        return " · ".join(dict.fromkeys(part for part in parts if part))

    def _words_of(self, index: int) -> str:
        words = self._words.get(index)
        if words is None:
            words = self._words[index] = words_of(self.found[index].qualified)
        return words


def chunk_pieces(embedder: Embedding, text: str, metadata: dict[str, Any]) -> list[list[int]]:
    """``text``'s word pieces cut into chunks of at most ``CHUNK_PIECES``, each headed by
    its names (``heading``) when the text is code the structure package reads."""
    found = definitions(text, metadata)
    symbol = str(metadata.get("symbol") or "")
    if symbol:  # the item is this definition (added by its name): it holds every line
        signature = " ".join(text.lstrip().split("\n", 1)[0].split())[:SIGNATURE_CHARS]
        found = [Definition(0, len(text), symbol, signature), *found]
    path = str(metadata.get("path") or "")
    if not found:
        return chunk_ids(embedder.pieces(text))
    encoding = embedder.tokenizer.encode(text, add_special_tokens=False)
    ids: list[int] = list(encoding.ids)
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    # Read once: each read of ``offsets`` makes a new list of every piece's offsets (read
    # twice a chunk, a 200 KB file takes 4.5 s of chunking, holding the GIL).
    offsets = encoding.offsets

    def line_at(piece: int) -> int:
        return bisect.bisect_right(starts, offsets[piece][0])

    headings = Headings(found, path)
    chunks = []
    start = 0
    while True:
        end = min(len(ids), start + CHUNK_PIECES) - 1
        first, last = (line_at(start), line_at(end)) if ids else (1, 1)
        head = embedder.pieces(headings.of(first, last))[:HEAD_PIECES]
        size = CHUNK_PIECES - len(head)
        chunks.append(head + ids[start : start + size])
        if start + size >= len(ids):
            return chunks
        start += size - OVERLAP
