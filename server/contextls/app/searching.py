"""Search and "Relevant history" for a workspace, through the one search path
(``contextls.search``), answered in the protocol's types."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from contextls.app import protocol_views as wire
from contextls.core.items import Item
from contextls.protocol import SearchHit, SearchResult, SemanticStatus
from contextls.search.meaning import meaning_for
from contextls.search.retrieval import relevant_history, retrieve
from contextls.storage.store import Store


def search(
    store: Store,
    root: str,
    archived: int,
    query: str,
    limit: int,
    kinds: Sequence[str] | None,
    mode: str | None,
) -> SearchResult:
    meaning = meaning_for(store.location)
    found = retrieve(store, meaning, root, query, limit, kinds, mode, archived)
    return SearchResult(
        hits=[
            SearchHit(
                item=wire.context_item(hit.item),
                score=round(hit.score, 4),
                snippet=hit.snippet.text,
                archived_at=hit.archived_at,
                reason=hit.reason,
                modes=list(hit.modes),  # type: ignore[arg-type]
                highlights=[list(span) for span in hit.snippet.highlights],
            )
            for hit in found.hits
        ],
        mode=found.mode,  # type: ignore[arg-type]
        warning=found.warning,
    )


def history(
    store: Store,
    root: str,
    archived: int,
    query: str,
    kinds: Sequence[str] | None,
    auto_retrieve: bool,
) -> tuple[list[Item], dict[str, float], list[str]]:
    """Render's "Relevant history": items best first, their scores by id, and warnings."""
    meaning = meaning_for(store.location)
    found = relevant_history(store, meaning, root, query, kinds, auto_retrieve, archived)
    scores = {hit.item.id: round(hit.score, 4) for hit in found.hits}
    return [hit.item for hit in found.hits], scores, [found.warning] if found.warning else []


def semantic_status(store: Store, root: str, archived: int) -> SemanticStatus:
    """Search by meaning in one workspace: available or why not, and its backlog."""
    return msgspec.convert(meaning_for(store.location).status(root, archived), SemanticStatus)


def process_semantic_status(store: Store) -> SemanticStatus:
    """For serverInfo: available or not, and why (no per-workspace counts, no model loaded)."""
    return msgspec.convert(meaning_for(store.location).availability(), SemanticStatus)
