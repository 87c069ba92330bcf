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
    if stem and stem not in ("__init__", "index", "mod", "lib", "main"):
        parts.append(words_of(stem))
    holding = [d for d in found if d.first < first <= d.last]
    if holding:
        parts.append(words_of(holding[-1].qualified))
        if holding[-1].signature:
            parts.append(holding[-1].signature)
    parts.extend(words_of(d.qualified) for d in found if first <= d.first <= last)
    return " · ".join(dict.fromkeys(p for p in parts if p))


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

    def line_at(piece: int) -> int:
        return bisect.bisect_right(starts, encoding.offsets[piece][0])

    chunks = []
    start = 0
    while True:
        end = min(len(ids), start + CHUNK_PIECES) - 1
        first, last = (line_at(start), line_at(end)) if ids else (1, 1)
        head = embedder.pieces(heading(found, first, last, path))[:HEAD_PIECES]
        size = CHUNK_PIECES - len(head)
        chunks.append(head + ids[start : start + size])
        if start + size >= len(ids):
            return chunks
        start += size - OVERLAP
