"""The one relevance gate: whether an archived item answers a query, and by what evidence.

Every path that brings archived items back (search in each mode, render's "Relevant
history", so MCP and both editors) asks it, so what it refuses is refused everywhere.
An item is relevant by its **words** (``keyword``), its **meaning** (``semantic``), or
both, and each hit says which.

- **Words**: the item holds most of the query's telling words, weighed by how rare each
  is in the archive (stop words never count), and, when search by meaning is there, its
  meaning does not contradict them (a question about dogs does not match an item for
  holding the word "ok").
- **Meaning**, decided for the query before any item: the best cosine must clear a floor
  that grows with the number of vectors searched (the best of many unrelated vectors is
  higher than the best of few) and when most of the query's words are ones the archive
  has never seen (a question about recipes names things no code holds; a paraphrase
  uses a word or two code does not, and pays nothing for them). Then every item close
  enough to the best one has meaning evidence.

No absolute cosine decides alone: MiniLM gives a question and the code it asks for
0.2-0.5, and unrelated text as much. The constants were fitted on tuning sets only
(``tests/relevance/fit.py``), never on the held-out packages of ``tests/relevance/
thirdparty.py``; the figures are in ``tests/bench/README.md``.
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from contextls.core.items import Item
from contextls.core.snippets import STOP_WORDS
from contextls.storage.search_index import name_words

MEANING_BASE: Final = -0.19
MEANING_PER_SPREAD: Final = 0.15
"""The meaning floor is ``MEANING_BASE + MEANING_PER_SPREAD * sqrt(2 ln rows)``: the
expected best of ``rows`` unrelated cosines grows like ``sqrt(2 ln rows)``. Fitted on
the tuning side (``tests/relevance/fit.py``: the third-party set's tuning packages at
100 and 241 functions, the standard-library slice, the first set's 5,046 functions;
250 off-topic questions): the floor that leaves the fewest paraphrases and docstrings
without any hit while at most 1.8 % of off-topic questions get one on each archive.
The floor is 0.25 at 80 vectors, 0.44 at 5,000, 0.53 at 100,000."""
UNKNOWN_FREE: Final = 0.4
MEANING_UNKNOWN: Final = 0.35
"""...plus this times the share of the query's telling words no archived item holds,
past the first 40 %. A question in a person's words names a thing or two code does not
("web address", "GUID") and is not refused for it; a question about weather or recipes
has most of its words unknown to a code archive. Charged from the first unknown word
(0.18 a share), the floor refused every answer to 5-22 % of the tuning paraphrases (0-1.2
% of off-topic questions with a hit); now 3-9 % (0.6-1.2 %). Without any such term, the
floor that keeps as many off-topic questions out refuses 6-14 %; letting 2.5 % of them
through would keep 0-6 % of paraphrases from being refused, and let 3-6 % of the first
set's held-out off-topic questions through on the held-out packages."""
FEWEST_ROWS: Final = 30
"""The floor is not lowered below that of 30 vectors (the smallest archive fitted)."""
MEANING_SPREAD: Final = 0.2
"""Items within this cosine of the best one have meaning evidence: 99 % of the wanted
items in the top 10 of the tuning half were within 0.21 of the best."""
WORDS_SHARE: Final = 0.8
"""Words evidence: the item holds this share of the query's telling words (by weight)."""
WORDS_AGREE: Final = 0.2
"""...and, where meaning is known, its cosine reaches this. On the tuning half no
off-topic question kept a hit with words evidence; every wanted item held them."""
COMMON_SHARE: Final = 0.05
COMMON_FLOOR: Final = 50
"""A telling word held by more than 5 % of the archive (and more than 50 items) is left
out of the keyword index's query when rarer ones are there."""
_NAMED: Final = re.compile(
    r"\b(?:def|function|class|func|fn|interface|struct|enum|type|const|let|var)\s+([A-Za-z_$][\w$]*)"
    r"|([A-Za-z_$][\w$]*)\s*\("
)
"""A name the text defines or calls: ``def quote(``, ``function isWeekend``, ``quote(s)``."""
_TERM: Final = re.compile(r"[^\W_]+")
_WORD: Final = re.compile(r"\w+")
_SUFFIXES: Final = ("ing", "ed", "es", "s")


QUERY_TERMS: Final = 32
"""The telling words of a query that search weighs: its first ones (a question has a
dozen). Each candidate's gate, snippet and keyword match go over every word of the
query: a pasted log of 10,000 characters (~800 words) held every client 1.6-5 s, its
first 64 words ~0.2 s over 600 archived pieces of code."""


def bounded(query: str) -> tuple[str, int]:
    """``query`` up to its ``QUERY_TERMS``-th telling word, and how many telling words
    after it were left out (0: the whole query)."""
    seen: set[str] = set()
    for match in _TERM.finditer(query):
        term = fold(match.group())
        if not term or term in STOP_WORDS or term in seen:
            continue
        if len(seen) == QUERY_TERMS:
            rest = query[match.start() :]
            return query[: match.start()], len(set(telling_terms(rest)) - seen)
        seen.add(term)
    return query, 0


def fold(word: str) -> str:
    """A word as the keyword index folds it: lower case, without diacritics."""
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def telling_terms(query: str) -> tuple[str, ...]:
    """The query's words that can tell items apart, folded, identifiers split at ``_``."""
    terms = (fold(term) for term in _TERM.findall(query))
    return tuple(dict.fromkeys(term for term in terms if term and term not in STOP_WORDS))


def identifiers(query: str) -> dict[str, str]:
    """Each telling term that is part of a ``snake_case`` name in ``query`` -> that name
    (folded, without outer underscores): ``_backoff_put`` is one thing to look for, not
    the words "backoff" and "put" anywhere."""
    names: dict[str, str] = {}
    for word in _WORD.findall(query):
        name = fold(word).strip("_")
        parts = telling_terms(name)
        if "_" in name and len(_TERM.findall(name)) > 1:
            for part in parts:
                names.setdefault(part, name)
    return names


@dataclass
class Words:
    """The query's telling words, their weights in this archive, and which items hold them."""

    terms: tuple[str, ...]
    weights: dict[str, float]
    counts: dict[str, int]
    """How many archived items hold each term."""
    unknown: float
    """The share of ``terms`` no archived item holds (nor a longer form of it): 1.0 for
    a query of stop words only."""
    names: dict[str, str] = field(default_factory=dict)
    """Terms that are parts of a ``snake_case`` name of the query -> the name: an item
    holds them when it holds the name (``identifiers``)."""
    _patterns: dict[str, tuple[str, re.Pattern[str]]] = field(default_factory=dict)
    _letters: dict[str, re.Pattern[str]] = field(default_factory=dict)
    _held: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for term in self.terms:
            whole = self.names.get(term, term)
            pattern = re.compile(rf"(?<![^\W_]){re.escape(whole)}(?![^\W_])")
            self._patterns[term] = (whole, pattern)

    def for_keyword_search(self, documents: int) -> str:
        """What the keyword index should look for: the telling words and names held by at
        most ``COMMON_SHARE`` of the archive (all of them when none is that rare). A word
        in every other item tells nothing apart, and ranking all its matches costs ~30 ms
        at 100,000 items; only the most recent of them would be ranked anyway. A name is
        kept whole (the index matches its parts side by side) when a part of it is rare."""
        most = max(COMMON_FLOOR, int(documents * COMMON_SHARE))
        rare = {term for term in self.terms if self.counts.get(term, 0) <= most}
        wanted = [self.names.get(term, term) for term in self.terms if term in rare or not rare]
        return " ".join(dict.fromkeys(wanted))

    def share(self, item: Item) -> float:
        """The weighted share of the query's telling words that ``item`` holds."""
        held = self._held.get(item.id)
        if held is None:
            held = self._held[item.id] = self._share_of(f"{item.label}\n{item.content[:65536]}")
        return held

    def named(self, item: Item) -> bool:
        """Whether every telling word of the query is a name ``item`` defines or calls, or
        a word of one: an identifier asked for, whatever the item's meaning says of it."""
        if not self.terms:
            return False
        names: set[str] = set()
        for defined, called in _NAMED.findall(item.content[:65536]):
            name = defined or called
            names.add(name.lower().strip("_"))
            names.update(name_words(name))
            names.update(part.lower() for part in _TERM.findall(name))
        return all(self.names.get(term, term) in names for term in self.terms)

    def _letters_of(self, term: str) -> re.Pattern[str]:
        """The term's letters in any case, compiled when first needed (most queries never
        look inside a name, and compiling costs ~0.2 ms)."""
        letters = self._letters.get(term)
        if letters is None:
            letters = self._letters[term] = re.compile(re.escape(term), re.IGNORECASE)
        return letters

    def _share_of(self, text: str) -> float:
        if not self.terms:
            return 0.0
        lowered = text.lower()
        # A substring test first: most items hold few of the words, and it is ~50x
        # cheaper than the search for the word standing whole.
        inside = [
            (term, whole, pattern)
            for term, (whole, pattern) in self._patterns.items()
            if whole in lowered
        ]
        found = [term for term, _, pattern in inside if pattern.search(lowered)]
        found.extend(  # a word inside a name: "weekend" of isWeekend
            term
            for term, whole, _ in inside
            if term not in found
            and whole == term
            and inside_a_name(text, term, found=self._letters_of(term))
        )
        return sum(self.weights[term] for term in found) / sum(self.weights.values())


def inside_a_name(
    text: str, word: str, tries: int = 64, found: re.Pattern[str] | None = None
) -> bool:
    """Whether ``word`` (folded) is one of the words of a joined name in ``text``, as the
    keyword index splits them (``storage.search_index.name_words``): "weekend" in
    ``isWeekend``, "request" in ``XMLHttpRequest``, "base" in ``base64``; not "end" in
    ``weekend``. Looks at the first ``tries`` places the letters occur (splitting a whole
    64 KB item into words costs ~15 ms; this, a search for the word)."""
    n = len(text)
    letters = found or re.compile(re.escape(word), re.IGNORECASE)
    for match in itertools.islice(letters.finditer(text), tries):
        i, j = match.span()
        first, last = text[i], text[j - 1]
        before = text[i - 1] if i else " "
        after = text[j] if j < n else " "
        left = (
            not before.isalnum()
            or (first.isupper() and (before.islower() or before.isdigit()))
            or before.isdigit() != first.isdigit()
            or (first.isupper() and before.isupper() and match.group()[1:2].islower())
        )
        right = (
            not after.isalnum()
            or (after.isupper() and last.islower())
            or after.isdigit() != last.isdigit()
            or (last.isupper() and after.isupper() and text[j + 1 : j + 2].islower())
        )
        part = match.group()
        one_word = part[1:].islower() or part.isupper() or part.isdigit()
        if left and right and one_word and (before.isalnum() or after.isalnum()):
            return True
    return False


def words_of(
    query: str,
    documents: int,
    counts: Callable[[tuple[str, ...]], dict[str, int]],
    prefix_known: Callable[[str], bool],
) -> Words:
    """``query``'s words weighed by the archive of ``documents`` items: ``counts`` says
    how many items hold each word, ``prefix_known`` whether any word starts with a stem."""
    terms = telling_terms(query)
    held = counts(terms) if terms else {}
    weights = {}
    unknown = 0
    for term in terms:
        count = held.get(term, 0)
        everything = max(documents, count)
        weights[term] = math.log((everything - count + 0.5) / (count + 0.5) + 1.0)
        if count == 0 and not _longer_form_known(term, prefix_known):
            unknown += 1
    share = unknown / len(terms) if terms else 1.0
    return Words(terms, weights, held, share, identifiers(query))


def _longer_form_known(term: str, prefix_known: Callable[[str], bool]) -> bool:
    """'spices' is known when 'spice' or 'spiced' is: a plural or tense of a known word."""
    for suffix in _SUFFIXES:
        stem = term[: -len(suffix)]
        if term.endswith(suffix) and len(stem) >= 4:
            return prefix_known(stem)
    return False


def meaning_floor(rows: int, unknown: float) -> float:
    """The best cosine a query needs for anything to be found by its meaning."""
    spread = math.sqrt(2.0 * math.log(max(rows, FEWEST_ROWS)))
    past = max(unknown - UNKNOWN_FREE, 0.0)
    return MEANING_BASE + MEANING_PER_SPREAD * spread + MEANING_UNKNOWN * past


@dataclass
class Gate:
    """The decision for one query: ``evidence`` of each candidate item."""

    words: Words
    best: float | None = None
    """The best cosine of the search by meaning; None where there is none."""
    rows: int = 0

    @property
    def floor(self) -> float | None:
        return None if self.best is None else meaning_floor(self.rows, self.words.unknown)

    @property
    def answers_by_meaning(self) -> bool:
        floor = self.floor
        return self.best is not None and floor is not None and self.best >= floor

    def evidence(self, item: Item, cosine: float | None) -> tuple[str, ...]:
        """``("keyword",)``, ``("semantic",)``, both, or ``()`` when the item is no answer."""
        found = []
        agrees = cosine is None or self.best is None or cosine >= WORDS_AGREE
        if self.words.share(item) >= WORDS_SHARE and (agrees or self.words.named(item)):
            found.append("keyword")
        if (
            self.answers_by_meaning
            and cosine is not None
            and self.best is not None
            and cosine >= self.best - MEANING_SPREAD
        ):
            found.append("semantic")
        return tuple(found)
