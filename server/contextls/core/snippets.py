"""Search snippets: plain text around the first match, with where the query's words are.

Clients highlight the spans themselves (a face in Emacs, a decoration in VS Code);
markup inside the text (``**bold**``) would show as stars in both. Stop words
never count as matches: "the" says nothing about which item was wanted.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

STOP_WORDS: Final = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "their",
        "this",
        "to",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
    )
)
"""Words that say nothing about which item is wanted (FTS5 matches them all the same)."""

_WORD: Final = re.compile(r"\w+")
ELLIPSIS: Final = "…"


@dataclass(frozen=True, slots=True)
class Snippet:
    text: str
    highlights: list[tuple[int, int]] = field(default_factory=list)
    """``[start, end)`` of each match in ``text``, in code points."""


def telling_words(query: str) -> list[str]:
    """The query's words that are worth highlighting (its stop words left out)."""
    return [word for word in _WORD.findall(query) if word.lower() not in STOP_WORDS]


def snippet(text: str, words: Sequence[str], width: int = 24) -> Snippet | None:
    """About ``width`` words of ``text`` around the first match of ``words``.

    FTS5's own snippet() costs ~0.15 ms a hit on a large archive (it re-runs
    the query's phrase matching); this one finds the words itself, case-folded
    like the unicode61 tokenizer (diacritics aside). None if no word occurs.
    Only the words near the match are read: a search of 500 hits tokenized every
    hit's whole text, most of a search's time on the event loop.
    """
    kept = tuple(word for word in words if word.lower() not in STOP_WORDS)
    pattern = _words_pattern(kept)
    if pattern is None:
        return None
    first = _first_match(text, pattern, kept)
    if first is None:
        return None
    start = _word_start(text, first.start())
    before = _last_words(text, start, width // 3)
    after = _first_words(text, start, width - len(before) + 1)
    shown_words = [*before, *after[: width - len(before)]]
    # Whitespace folds to single spaces; no word changes, so matches are found again.
    piece = " ".join(text[shown_words[0][0] : shown_words[-1][1]].split())
    opened = ELLIPSIS if _WORD.search(text, 0, shown_words[0][0]) else ""
    shown = opened + piece + (ELLIPSIS if len(after) > width - len(before) else "")
    spans = [
        (len(opened) + found.start(), len(opened) + found.end())
        for found in pattern.finditer(piece)
    ]
    return Snippet(shown, spans)


def _first_match(text: str, pattern: re.Pattern[str], words: Sequence[str]) -> re.Match[str] | None:
    """``pattern.search(text)``, tried only where a word occurs (in any case) in an ASCII
    text: every match starts there, and a pattern of many words is slow to try at every
    position. (Beyond ASCII, a case-insensitive match may differ from ``str.lower``.)"""
    if not text.isascii() or not all(word.isascii() for word in words):
        return pattern.search(text)
    lowered = text.lower()
    waiting = [
        (at, word) for word in {word.lower() for word in words} if (at := lowered.find(word)) >= 0
    ]
    heapq.heapify(waiting)
    while waiting:
        at, word = waiting[0]
        found = pattern.match(text, at)
        if found is not None:
            return found
        following = lowered.find(word, at + 1)
        if following < 0:
            heapq.heappop(waiting)
        else:
            heapq.heapreplace(waiting, (following, word))
    return None


def _word_start(text: str, at: int) -> int:
    """Where the word holding ``at`` starts (``at`` itself between words)."""
    while at > 0 and (text[at - 1].isalnum() or text[at - 1] == "_"):
        at -= 1
    return at


def _last_words(text: str, end: int, count: int) -> list[tuple[int, int]]:
    """The (start, end) of the last ``count`` words before ``end`` (a word boundary),
    read from a stretch before it that grows until it holds them."""
    if count <= 0:
        return []
    reach = 64 * count
    while True:
        begin = max(0, end - reach)
        found = [match.span() for match in _WORD.finditer(text, begin, end)]
        # A stretch that starts inside a word: its first match may be a part of one.
        if begin == 0 or len(found) > count:
            return found[-count:]
        reach *= 4


def _first_words(text: str, start: int, count: int) -> list[tuple[int, int]]:
    """The (start, end) of up to ``count`` words from ``start`` (a word boundary)."""
    return [match.span() for match in itertools.islice(_WORD.finditer(text, start), count)]


@functools.lru_cache(maxsize=64)
def _words_pattern(words: tuple[str, ...]) -> re.Pattern[str] | None:
    """The words standing alone in any case, or as a word of a camelCase name as the
    keyword index splits it ("wednesday" in ``isWednesday``, "previous" in
    ``previousWednesday``), so a hit found by a word of a name shows where. Made once for
    a search's words, not once a hit."""
    if not words:
        return None
    alone = r"(?i:\b(?:" + "|".join(re.escape(word) for word in words) + r")\b)"
    parts = []
    for word in words:
        lower = word.lower()
        if lower.isascii() and lower.isalpha():
            parts.append(rf"(?<=[a-z0-9]){re.escape(lower.capitalize())}(?![a-z])")
            parts.append(rf"\b{re.escape(lower)}(?=[A-Z0-9])")
    return re.compile("|".join([alone, *parts]))


def opening(text: str, limit: int = 160) -> Snippet:
    """The start of a text, for a hit found by meaning alone (no word to show)."""
    return Snippet(" ".join(text[: limit * 2].split())[:limit])
