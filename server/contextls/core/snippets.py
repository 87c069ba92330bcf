"""Search snippets: plain text around the first match, with where the query's words are.

Clients highlight the spans themselves (a face in Emacs, a decoration in VS Code);
markup inside the text (``**bold**``) would show as stars in both. Stop words
never count as matches: "the" says nothing about which item was wanted.
"""

from __future__ import annotations

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
    """
    words = [word for word in words if word.lower() not in STOP_WORDS]
    if not words:
        return None
    pattern = _words_pattern(words)
    first = pattern.search(text)
    if first is None:
        return None
    tokens = list(_WORD.finditer(text))
    at = next(i for i, token in enumerate(tokens) if token.end() > first.start())
    lo = max(0, at - width // 3)
    hi = min(len(tokens), lo + width)
    # Whitespace folds to single spaces; no word changes, so matches are found again.
    piece = " ".join(text[tokens[lo].start() : tokens[hi - 1].end()].split())
    before = ELLIPSIS if lo > 0 else ""
    shown = before + piece + (ELLIPSIS if hi < len(tokens) else "")
    spans = [
        (len(before) + found.start(), len(before) + found.end())
        for found in pattern.finditer(piece)
    ]
    return Snippet(shown, spans)


def _words_pattern(words: Sequence[str]) -> re.Pattern[str]:
    """The words standing alone in any case, or as a word of a camelCase name as the
    keyword index splits it ("wednesday" in ``isWednesday``, "previous" in
    ``previousWednesday``), so a hit found by a word of a name shows where."""
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
