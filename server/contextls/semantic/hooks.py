"""What the workspace and the LSP handlers call (each through a one-line hook).

Kept apart so the service, workspace and handlers change by a line or two;
everything semantic stays in this package. Without the extra these give the
keyword answers the server gave before, plus a reason in ``status``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec

from ..core.items import Item
from ..protocol import SearchHit, SearchResult, SemanticStatus
from .engine import engine_for
from .retrieval import relevant_history, retrieve

if TYPE_CHECKING:
    from ..app.workspace import Workspace
    from ..storage.store import Store


def search(
    workspace: Workspace, query: str, limit: int, kinds: Sequence[str] | None, mode: str | None
) -> SearchResult:
    from ..app import protocol_views as wire

    store = workspace.store
    found = retrieve(
        store,
        engine_for(store.location),
        workspace.root_uri,
        query,
        limit,
        kinds,
        mode,
        workspace.archived_count,
    )
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
    workspace: Workspace, query: str, kinds: Sequence[str] | None, auto_retrieve: bool
) -> tuple[list[Item], dict[str, float], list[str]]:
    """Render's "Relevant history": items best first, their scores by id, and warnings."""
    store = workspace.store
    found = relevant_history(
        store,
        engine_for(store.location),
        workspace.root_uri,
        query,
        kinds,
        auto_retrieve,
        workspace.archived_count,
    )
    scores = {hit.item.id: round(hit.score, 4) for hit in found.hits}
    return [hit.item for hit in found.hits], scores, [found.warning] if found.warning else []


def status(store: Store, root: str, archived: int) -> SemanticStatus:
    return msgspec.convert(engine_for(store.location).status(root, archived), SemanticStatus)


def process_status(store: Store) -> SemanticStatus:
    """For serverInfo: available or not, and why (no per-workspace counts)."""
    engine = engine_for(store.location)
    available = engine.available
    return SemanticStatus(
        available=available, model=engine.model_id if available else "", reason=engine.reason
    )


def index_some(store: Store, idle: object) -> bool | None:
    """An idle turn: embed in the background while ``idle()`` (see ``engine.index_some``)."""
    return engine_for(store.location).index_some(idle)  # type: ignore[arg-type]


def before_scrub(store: Store) -> None:
    """A forget committed: vectors of forgotten window items go before the VACUUM."""
    engine_for(store.location).drop_orphans()
