"""Reading a window: list, render (with relevant history), search."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence

from contextls.app import protocol_views as wire
from contextls.app import searching
from contextls.app.workspace_state import WorkspaceState
from contextls.core.costs import OFF_LOOP_CHARS
from contextls.core.items import Item
from contextls.core.render import Rendered, render, select
from contextls.protocol import (
    CacheBreakpoint,
    ListResult,
    Omission,
    RenderFormat,
    RenderResult,
    SearchResult,
    SemanticStatus,
)
from contextls.search.meaning import MeaningProvider, meaning_for
from contextls.search.relevance import bounded


class Reading:
    """Reading the window: list, render, search."""

    def __init__(self, state: WorkspaceState) -> None:
        self.state = state

    def list_items(self, kinds: Sequence[str] | None, limit: int | None) -> ListResult:
        chosen = select(list(self.state.window), kinds, limit)
        return ListResult(items=[wire.context_item(item) for item in chosen])

    def render(
        self,
        fmt: RenderFormat,
        kinds: Sequence[str] | None,
        limit: int | None,
        max_tokens: int | None,
        query: str | None,
        auto_retrieve: bool = False,
    ) -> RenderResult | Awaitable[RenderResult]:
        """The window drawn for an LLM (an awaitable of it, drawn in a worker thread, when
        it is large: ``OFF_LOOP_CHARS``); the items and the history are those of now."""
        items = select(list(self.state.window), kinds, limit)
        history: list[Item] = []
        scores: dict[str, float] = {}
        missed: list[str] = []
        if query and query.strip():  # archived items that answer it: "Relevant history"
            history, scores, missed = self.state.storage(
                searching.history,
                self.state.store,
                self.state.root_uri,
                self.state.archived_count,
                query,
                kinds,
                auto_retrieve,
            )
        budget = self.state.window.limits.max_tokens
        tokenizer = self.state.tokenizer

        def draw() -> tuple[Rendered, list[int]]:
            rendered = render(
                items, fmt, tokenizer.count, max_tokens, history, budget, tokenizer.count_pieces
            )
            before = [
                rendered.tokens if after == "end" else tokenizer.count(text)
                for after, text in rendered.boundaries
            ]
            return rendered, before

        def result(drawn: tuple[Rendered, list[int]]) -> RenderResult:
            rendered, counted = drawn
            if fmt == "markdown" and max_tokens is None and not history:
                self.state.rendered([item for item in items if item.id in set(rendered.item_ids)])
            return RenderResult(
                breakpoints=[
                    CacheBreakpoint(
                        after=after,  # type: ignore[arg-type]
                        offset=len(before),
                        utf16_offset=len(before.encode("utf-16-le")) // 2,
                        tokens=tokens,
                    )
                    for (after, before), tokens in zip(rendered.boundaries, counted, strict=True)
                ],
                text=rendered.text,
                tokens=rendered.tokens,
                item_ids=rendered.item_ids,
                omitted_ids=rendered.omitted_ids,
                format=fmt,
                history_ids=rendered.history_ids,
                history_scores=[scores.get(item_id, 0.0) for item_id in rendered.history_ids],
                warnings=[
                    *rendered.warnings,
                    *missed,
                    *(
                        w
                        for item_id in rendered.item_ids
                        for w in self.state.secret_warnings(item_id)
                    ),
                ],
                history_omitted=[
                    Omission(id=item_id, reason=why) for item_id, why in rendered.history_omitted
                ],
                budget=max_tokens or budget,
            )

        if sum(len(item.content) for item in (*items, *history)) < OFF_LOOP_CHARS:
            return result(draw())

        async def drawn_off_the_loop() -> RenderResult:
            return result(await asyncio.to_thread(draw))

        return drawn_off_the_loop()

    def search(
        self, query: str, limit: int, kinds: Sequence[str] | None, mode: str | None = None
    ) -> SearchResult:
        return self.state.storage(
            searching.search,
            self.state.store,
            self.state.root_uri,
            self.state.archived_count,
            query,
            limit,
            kinds,
            mode,
        )

    def meaning(self) -> MeaningProvider:
        """Search by meaning of this window's database."""
        return meaning_for(self.state.store.location)

    def search_prepares(self) -> bool:
        """Whether a search here first loads the model of search by meaning (a process's
        first) or embeds the window's small backlog (~0.6 s, up to ~0.25 s)."""
        meaning = self.meaning()
        return meaning.unloaded or meaning.catches_up(
            self.state.root_uri, self.state.archived_count
        )

    def index_behind(self) -> bool:
        """Whether the archive's keyword index has rows to catch up on before a search
        (``lsp.handlers`` catches up in turns: 2,000 notes at once ~0.2 s)."""
        store = self.state.store
        return store.read_only is None and store.index.behind()

    def query_waits(self, query: str) -> bool:
        """Whether a search for ``query`` would wait for its embedding (see
        ``MeaningProvider.embed_query``): the query as searched for, its first words."""
        return bool(query.strip()) and self.meaning().embeds_query(bounded(query)[0])

    def prepare_query(self, query: str) -> None:
        """Embed ``query`` as a search will (in a worker thread, before the search); kept
        from before, nothing to do."""
        if query.strip():
            self.meaning().embed_query(bounded(query)[0])

    def prepare_search(self) -> None:
        """What ``search_prepares`` says a search does first, done now (in a worker
        thread, before the search on the loop). Thread-safe."""
        meaning = self.meaning()
        meaning.load()
        meaning.catch_up(self.state.root_uri, self.state.archived_count)

    def semantic_status(self) -> SemanticStatus:
        """Search by meaning here (only ``status`` answers carry it; pushes stay cheap)."""
        return searching.semantic_status(
            self.state.store, self.state.root_uri, self.state.archived_count
        )
