"""Keyword, semantic or hybrid retrieval of archived items, for search and render.

Keyword ranks the store's FTS5 hits by bm25; semantic ranks the registered provider's
nearest items (``meaning``) by cosine; hybrid fuses both (``fusion``). Every mode then
keeps only what the one relevance gate (``relevance``) finds evidence for, and each hit
says which: its words, its meaning, or both. When semantic search is asked for but
cannot run, the answer is keyword hits with a warning saying why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextls.core.items import Item
from contextls.core.snippets import Snippet, opening, snippet, telling_words
from contextls.search import fusion, relevance
from contextls.search.meaning import MeaningProvider, Nearest
from contextls.storage.store import ArchiveHit, Store

CANDIDATES = 30
"""Hits per mode before the gate and fusion. Keyword hits cost a snippet each; 30 is
past the point where the relevance set's fused ranking changes (20, 30, 50 tie)."""


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
    # Asked once: while another writer holds the file, each asking tries to open it.
    available = meaning.available
    wanted = mode or ("hybrid" if available else "keyword")
    warning = None
    if wanted != "keyword" and not available:
        warning = f"semantic search unavailable ({meaning.reason}); keyword results"
        wanted = "keyword"
    if not query.strip():
        return Retrieval([], wanted, warning)
    query, left_out = relevance.bounded(query)
    if left_out:
        said = (
            f"the query's first {relevance.QUERY_TERMS} words were searched for "
            f"({left_out} more left out)"
        )
        warning = f"{warning}; {said}" if warning else said
    # The workspace keeps the archive's count; counting it costs ~5 ms at 100,000.
    documents = store.archive.archived_count(root) if archived is None else archived
    words = relevance.words_of(
        query,
        documents,
        lambda terms: store.index.term_counts(root, terms),
        store.index.prefix_known,
    )
    keyword_hits = (
        store.index.search(root, words.for_keyword_search(documents), max(limit, CANDIDATES), kinds)
        if wanted != "semantic" and words.terms
        else []
    )
    gate = relevance.Gate(words)
    nearest = Nearest()
    if available:  # the gate weighs meaning in every mode
        waiting = meaning.catch_up(root, documents)
        if waiting:
            said = (
                f"{waiting} archived item{'s' if waiting != 1 else ''} not embedded yet; "
                "semantic results may miss them"
            )
            warning = f"{warning}; {said}" if warning else said
        asked = [hit.item.id for hit in keyword_hits]
        wide = max(limit, CANDIDATES) if wanted != "keyword" else 1
        nearest = meaning.nearest(root, query, wide, list(kinds) if kinds else None, asked)
        if nearest.rows:
            gate = relevance.Gate(words, nearest.hits[0][1] if nearest.hits else None, nearest.rows)
    cosines = {**nearest.asked, **dict(nearest.hits)}
    by_id = {hit.item.id: hit for hit in keyword_hits}
    ranked = _ranked(wanted, keyword_hits, nearest, cosines, words, store, root)
    hits = []
    for item_id, score in ranked:
        keyword_hit = by_id.get(item_id)
        item = keyword_hit.item if keyword_hit else ranked.items[item_id]
        evidence = gate.evidence(item, cosines.get(item_id))
        if not evidence:
            continue
        if keyword_hit is not None:
            text, archived_at, reason = (
                keyword_hit.snippet,
                keyword_hit.archived_at,
                keyword_hit.reason,
            )
        else:
            text = snippet(item.content, telling_words(query)) or opening(item.content)
            archived_at, reason = ranked.places.get(item_id, (0, ""))
        hits.append(
            Retrieved(item, score, text, archived_at, reason, evidence, cosines.get(item_id))
        )
        if len(hits) == limit:
            break
    return Retrieval(hits, wanted, warning)


class _Ranking(list[tuple[str, float]]):
    """Candidates best first, with the archived items and places of those found by meaning."""

    def __init__(
        self,
        ranked: list[tuple[str, float]],
        items: dict[str, Item],
        places: dict[str, tuple[int, str]],
    ) -> None:
        super().__init__(ranked)
        self.items = items
        self.places = places


def _ranked(
    wanted: str,
    keyword_hits: list[ArchiveHit],
    nearest: Nearest,
    cosines: dict[str, float],
    words: relevance.Words,
    store: Store,
    root: str,
) -> _Ranking:
    by_id = {hit.item.id: hit for hit in keyword_hits}
    if wanted == "keyword":
        return _Ranking([(hit.item.id, hit.score) for hit in keyword_hits], {}, {})
    missing = [item_id for item_id, _ in nearest.hits if item_id not in by_id]
    items = store.archive.archived(root, missing) if missing else {}
    places = store.archive.archive_places(root, missing) if missing else {}
    known = {**items, **{item_id: hit.item for item_id, hit in by_id.items()}}
    if wanted == "semantic":
        ranked = [(item_id, score) for item_id, score in nearest.hits if item_id in known]
        return _Ranking(ranked, items, places)
    shares = {item_id: words.share(item) for item_id, item in known.items()}
    keyword = [(hit.item.id, hit.score) for hit in keyword_hits]
    semantic = [(item_id, score) for item_id, score in nearest.hits if item_id in known]
    fused = fusion.fuse(keyword, semantic, cosines, shares)
    return _Ranking([(f.id, f.score) for f in fused], items, places)


HISTORY_LIMIT = 10
HISTORY_RELATIVE = 0.5
"""Render's plain ``query`` takes the hits scoring at least this share of the best."""
AUTO_RETRIEVE_LIMIT = 50
AUTO_RETRIEVE_RELATIVE = 0.8
"""``autoRetrieve`` takes the hits found by their words, and those found by meaning
alone whose cosine is at least this share of the best hit's."""


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

    Only what the relevance gate lets through, as for search, and of that only what is
    close to the best hit, since the window's budget is precious. Plain ``query``: of the
    10 best hits (hybrid, or keyword), those scoring near the best one. ``autoRetrieve``:
    of up to 50, those found by their words or close to the best by meaning, so the
    renderer fills whatever budget the window leaves with relevant ones only.
    """
    if not auto_retrieve:
        found = retrieve(store, meaning, root, query, HISTORY_LIMIT, kinds, None, archived)
        if found.mode == "keyword":
            return found  # words alone: every hit the gate let through, as ranked
        best = max((hit.score for hit in found.hits), default=0.0)
        close = [hit for hit in found.hits if hit.score >= best * HISTORY_RELATIVE]
        return Retrieval(close, found.mode, found.warning)
    found = retrieve(store, meaning, root, query, AUTO_RETRIEVE_LIMIT, kinds, None, archived)
    if found.mode == "keyword":
        return Retrieval(found.hits[:HISTORY_LIMIT], found.mode, found.warning)
    best = max((hit.similarity or 0.0 for hit in found.hits), default=0.0)
    relevant = [
        hit
        for hit in found.hits
        if "keyword" in hit.modes or (hit.similarity or 0.0) >= best * AUTO_RETRIEVE_RELATIVE
    ]
    return Retrieval(relevant, found.mode, found.warning)
