"""Keyword, semantic or hybrid retrieval of archived items, for search and render.

Keyword is the store's FTS5 bm25 search; semantic comes from the registered
provider (``meaning``); hybrid fuses both (``fusion``). When semantic search is
asked for but cannot run, the answer is keyword hits with a warning saying why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from contextls.core.items import Item
from contextls.core.snippets import STOP_WORDS, Snippet, opening, snippet, telling_words
from contextls.search import fusion
from contextls.search.meaning import MeaningProvider
from contextls.storage.store import Store

SEMANTIC_FLOOR = 0.44
"""Cosine below which a hit found only by meaning is noise, not an answer, so a search
whose nearest item is not close says that nothing matches. Calibrated on questions
about anything but code (``tests/relevance/offtopic.py``: recipes, weather, sport,
nonsense words; 70 of them): against both relevance archives their nearest items
score at most 0.43 ("golf handicap calculation" -> ``difflib.get_close_matches``;
then 0.39, "is it going to be sunny on Saturday" -> ``calendar.weekday``). Real
paraphrases score as low (0.19-0.43 for some wanted items), so meaning-only search
loses some of them (recall@3 0.80 -> 0.72 and 0.84 -> 0.71 on the two sets); hybrid,
where such items are also found by their words, keeps all of its recall and MRR."""
RELATIVE_FLOOR = 0.6
"""...and a hit found only by meaning must reach this share of the best cosine. On a
small archive everything clears 0.15 (13 files of one project: 0.16-0.52 for a query
of two identifiers), and a list of every item is no answer. On the relevance sets
(300+ functions) 0.4-0.7 changed no recall@3 or MRR and cut 0-9 % of the hits."""
AUTO_RETRIEVE_THRESHOLD = 0.15
"""Cosine floor for bringing an archived item back (MiniLM gives code-vs-question
pairs low absolute cosines: ~0.19 for a right answer here, ~0.1 for noise)."""
AUTO_RETRIEVE_RELATIVE = 0.8
"""...and it must score at least this share of the best hit's cosine."""
CANDIDATES = 30
"""Hits per mode before fusion. Keyword hits cost a snippet each; 30 is past the
point where the relevance set's fused ranking changes (measured: 20, 30, 50 tie)."""


@dataclass(frozen=True)
class Retrieved:
    item: Item
    score: float
    snippet: Snippet
    archived_at: int
    reason: str
    modes: tuple[str, ...]
    similarity: float | None  # the cosine, when the semantic search found it


@dataclass(frozen=True)
class Retrieval:
    hits: list[Retrieved]
    mode: str
    warning: str | None


def retrieve(
    store: Store,
    meaning: MeaningProvider,
    root: str,
    query: str,
    limit: int,
    kinds: Sequence[str] | None,
    mode: str | None,
    archived: int | None = None,
) -> Retrieval:
    wanted = mode or ("hybrid" if meaning.available else "keyword")
    warning = None
    if wanted != "keyword" and not meaning.available:
        warning = f"semantic search unavailable ({meaning.reason}); keyword results"
        wanted = "keyword"
    keyword_hits = (
        store.search(root, query, max(limit, CANDIDATES) if wanted == "hybrid" else limit, kinds)
        if wanted != "semantic"
        else []
    )
    if wanted == "keyword" or not query.strip():
        return Retrieval(
            [
                Retrieved(h.item, h.score, h.snippet, h.archived_at, h.reason, ("keyword",), None)
                for h in keyword_hits
            ],
            "keyword",
            warning,
        )
    # The workspace keeps the archive's count; counting it costs ~5 ms at 100,000.
    waiting = meaning.catch_up(root, store.archived_count(root) if archived is None else archived)
    if waiting:
        warning = (
            f"{waiting} archived item{'s' if waiting != 1 else ''} not embedded yet; "
            "semantic results may miss them"
        )
    nearest = meaning.search(root, query, max(limit, CANDIDATES), list(kinds) if kinds else None)
    cosine = dict(nearest)
    by_id = {hit.item.id: hit for hit in keyword_hits}
    floor = max(SEMANTIC_FLOOR, (nearest[0][1] if nearest else 0.0) * RELATIVE_FLOOR)
    if wanted == "semantic":
        ranked = [fusion.Fused(i, s, ("semantic",)) for i, s in nearest if s >= floor][:limit]
    else:
        keyword_scores = [(hit.item.id, hit.score) for hit in keyword_hits]
        terms = query_terms(query)
        coverage = {hit.item.id: term_coverage(terms, hit.item) for hit in keyword_hits}
        # Fused over every candidate (the floor would lift keyword-only hits, which
        # rank as the lowest cosine seen); then the noise found only by meaning goes.
        everything = len(nearest) + len(keyword_scores)
        ranked = fusion.fuse(keyword_scores, nearest, everything, fusion.KEYWORD_WEIGHT, coverage)
        ranked = [f for f in ranked if f.modes != ("semantic",) or cosine[f.id] >= floor]
        ranked = ranked[:limit]
    missing = [f.id for f in ranked if f.id not in by_id]
    items = store.archived(root, missing) if missing else {}
    places = store.archive_places(root, missing)
    words = telling_words(query)
    hits = []
    for fused in ranked:
        keyword_hit = by_id.get(fused.id)
        if keyword_hit is not None:
            item, text = keyword_hit.item, keyword_hit.snippet
            archived_at, reason = keyword_hit.archived_at, keyword_hit.reason
        elif fused.id in items:
            item = items[fused.id]
            text = snippet(item.content, words) or opening(item.content)
            archived_at, reason = places.get(fused.id, (0, ""))
        else:
            continue  # restored between the two searches
        hits.append(
            Retrieved(
                item, fused.score, text, archived_at, reason, fused.modes, cosine.get(item.id)
            )
        )
    return Retrieval(hits, wanted, warning)


_TERM = re.compile(r"[^\W_]+")


def query_terms(query: str) -> set[str]:
    """The query's words that can tell items apart: lower case, identifiers split at _."""
    return {term for term in _TERM.findall(query.lower()) if term not in STOP_WORDS}


def term_coverage(terms: set[str], item: Item) -> float:
    """The share of ``terms`` found in the item's text or label (1.0 for no terms)."""
    if not terms:
        return 1.0
    text = f"{item.label}\n{item.content[:65536]}".lower()
    return sum(term in text for term in terms) / len(terms)


HISTORY_LIMIT = 10
HISTORY_RELATIVE = 0.5
AUTO_RETRIEVE_LIMIT = 50


def relevant_history(
    store: Store,
    meaning: MeaningProvider,
    root: str,
    query: str,
    kinds: Sequence[str] | None,
    auto_retrieve: bool,
    archived: int | None = None,
) -> Retrieval:
    """Archived items for render's "Relevant history", best first, and why it may miss some.

    Plain ``query``: the 10 best hybrid (or keyword) hits, as search would give.
    ``autoRetrieve``: up to 50 hits whose cosine passes the threshold, so the
    renderer fills whatever budget the window leaves with the relevant ones only.
    """
    if not auto_retrieve:
        found = retrieve(store, meaning, root, query, HISTORY_LIMIT, kinds, None, archived)
        if found.mode == "keyword":
            return found  # words alone: every hit as ranked
        # The window's budget is precious: only hits close to the best one come along
        # (a keyword hit scores ~1 more than the neighbours found by meaning alone).
        best = max((hit.score for hit in found.hits), default=0.0)
        close = [hit for hit in found.hits if hit.score >= best * HISTORY_RELATIVE]
        return Retrieval(close, found.mode, found.warning)
    found = retrieve(store, meaning, root, query, AUTO_RETRIEVE_LIMIT, kinds, None, archived)
    if found.mode == "keyword":
        return Retrieval(found.hits[:HISTORY_LIMIT], found.mode, found.warning)
    best = max((hit.similarity or 0.0 for hit in found.hits), default=0.0)
    floor = max(AUTO_RETRIEVE_THRESHOLD, best * AUTO_RETRIEVE_RELATIVE)
    relevant = [hit for hit in found.hits if (hit.similarity or 0.0) >= floor]
    return Retrieval(relevant, found.mode, found.warning)
