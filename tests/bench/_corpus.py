"""Seeded, code-like text for realistic items and search queries.

Search cost depends on the term distribution, so the text is not lorem
ipsum: identifiers are built from syllables and drawn with a Zipf law (a few
very common names, a long tail of rare ones), arranged in Python-looking
lines. Items are assembled from a pool of pre-generated lines so that 100,000
items of ~1 KB are cheap to make while each stays distinct.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

SYLLABLES = tuple(c + v for c in "bcdfghklmnprstvz" for v in "aeiou")

TEMPLATES = (
    "def {a}_{b}({c}, {d}):",
    "    {a} = {b}.{c}({d}, {n})",
    "    if {a} is None:",
    "        return {b}_{c}",
    "    for {a} in {b}.{c}():",
    "        {a}.{b}[{n}] = {c}",
    "class {A}{B}({C}):",
    "    # {a} {b} {c} {d} before {e}",
    "    return {a} + {b} * {n}",
    "from {a}.{b} import {c}_{d}",
    '    raise {A}Error(f"{a} {b} {{{c}}}")',
    "    {a}_{b} = [{c} for {c} in {d} if {c}.{e}]",
    '    assert {a}({b}) == {n}, "{c} {d}"',
)


class Corpus:
    def __init__(self, seed: int = 5, words: int = 12_000, pool_lines: int = 30_000) -> None:
        self.rng = random.Random(seed)
        self.words = self._vocabulary(words)
        weights = [1.0 / (rank + 1) ** 1.1 for rank in range(len(self.words))]
        self._cum = list(itertools.accumulate(weights))
        self.lines = [self._line() for _ in range(pool_lines)]
        self._line_freq = Counter(w for line in self.lines for w in set(_identifiers(line)))

    def _vocabulary(self, n: int) -> list[str]:
        seen: set[str] = set()
        out: list[str] = []
        while len(out) < n:
            w = "".join(self.rng.choices(SYLLABLES, k=self.rng.randint(2, 4)))
            if w not in seen:
                seen.add(w)
                out.append(w)
        return out

    def _word(self) -> str:
        return self.rng.choices(self.words, cum_weights=self._cum)[0]

    def _line(self) -> str:
        t = self.rng.choice(TEMPLATES)
        fields = {k: self._word() for k in "abcde"}
        fields.update({k.upper(): v.capitalize() for k, v in fields.items()})
        return t.format(n=self.rng.randint(0, 999), **fields)

    def text(self, approx_chars: int, tag: str = "") -> str:
        """Distinct code-like text of about ``approx_chars`` characters."""
        parts = [f"# {tag}"] if tag else []
        size = len(parts[0]) if parts else 0
        while size < approx_chars:
            line = self.rng.choice(self.lines)
            parts.append(line)
            size += len(line) + 1
        return "\n".join(parts)

    def queries(self, n: int) -> list[str]:
        """2-3 word queries mixing common identifiers with rarer ones.

        Half the queries are all common words (many matches to rank), half
        pair a common word with words seen in only a handful of lines (few
        matches): both paths of a full-text search.
        """
        # Template keywords (def, return, none...) are in every item; nobody
        # searches for them, so queries use generated identifiers only.
        vocab = set(self.words)
        ranked = [w for w, _ in self._line_freq.most_common() if w in vocab]
        common = ranked[:40]
        rare = [w for w in ranked if self._line_freq[w] <= 3] or ranked[-100:]
        out = []
        for i in range(n):
            k = self.rng.randint(2, 3)
            if i % 2 == 0:
                words = self.rng.sample(common, k)
            else:
                words = [self.rng.choice(common), *self.rng.sample(rare, k - 1)]
            out.append(" ".join(words))
        return out


def _identifiers(line: str) -> list[str]:
    word = []
    out = []
    for ch in line + " ":
        if ch.isalpha():
            word.append(ch.lower())
        elif word:
            out.append("".join(word))
            word = []
    return out
