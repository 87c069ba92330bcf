"""Handlers of the requests that use the code's structure: a symbol by name, the
symbol at a place, an item's view, the repository map."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from contextls import protocol as p
from contextls.app.map_messages import FindRequest
from contextls.lsp.progress import Reporter
from contextls.lsp.registry import handles
from contextls.lsp.server import ContextServer


@handles(p.Requests.ADD_NAMED_SYMBOL)
async def add_named_symbol(ls: ContextServer, params: p.AddNamedSymbolParams) -> p.AddResult:
    """The definition is found off the loop (every file of the workspace in the maps'
    process, which keeps what it parsed for the next map; one file in a thread), then
    added on the loop, from what the parse left in the workspace's code index."""
    workspace = ls.session.route(params.workspace, params.uri)
    uri = params.uri
    if uri is None:
        asked = FindRequest(
            str(workspace.sources.root), workspace.settings.max_file_bytes, params.name
        )
        uri = workspace.symbols.locate_named(params.name, await ls.service.maps.find(asked))
    await asyncio.to_thread(workspace.symbols.find_symbol, params.name, uri, params.language)
    return ls.session.route(params.workspace, uri).symbols.add_named_symbol(
        params.name, uri, params.language, params.metadata, params.pin, params.outline
    )


@handles(p.Requests.SYMBOL_AT)
async def symbol_at(ls: ContextServer, params: p.SymbolAtParams) -> p.SymbolAtResult:
    """Parsed in a thread: it changes nothing but the code index's cache."""
    workspace = ls.session.route(params.workspace, params.uri)
    return await asyncio.to_thread(
        workspace.symbols.symbol_at, params.uri, params.position.line, params.text
    )


@handles(p.Requests.SET_VIEW)
def set_view(
    ls: ContextServer, params: p.SetViewParams
) -> p.SetViewResult | Awaitable[p.SetViewResult]:
    return ls.session.route(params.workspace).views.set_view(list(params.ids), params.view)


@handles(p.Requests.ADD_MAP)
async def add_map(ls: ContextServer, params: p.AddMapParams) -> p.AddResult:
    """Parsed and ranked in the map's own process: others are answered meanwhile."""
    workspace = ls.session.route(params.workspace)
    progress = Reporter(ls.outbox, params.work_done_token, "Reading the workspace for its map")
    outcome = "cancelled"
    try:
        added = await workspace.map.add_map(
            ls.service.maps,
            params.query,
            params.tokens,
            params.metadata,
            params.pin,
            progress.report,
        )
        outcome = f"{added.item.metadata.get('definitions', 0)} definitions ranked"
        return added
    finally:
        progress.end(outcome)
