"""Handlers of the requests that use the code's structure: a symbol by name, the
symbol at a place, an item's view, the repository map."""

from __future__ import annotations

from contextls import protocol as p
from contextls.lsp.registry import handles
from contextls.lsp.server import ContextServer


@handles(p.Requests.ADD_NAMED_SYMBOL)
def add_named_symbol(ls: ContextServer, params: p.AddNamedSymbolParams) -> p.AddResult:
    workspace = ls.session.route(params.workspace, params.uri)
    return workspace.add_named_symbol(
        params.name, params.uri, params.language, params.metadata, params.pin, params.outline
    )


@handles(p.Requests.SYMBOL_AT)
def symbol_at(ls: ContextServer, params: p.SymbolAtParams) -> p.SymbolAtResult:
    workspace = ls.session.route(params.workspace, params.uri)
    return workspace.symbol_at(params.uri, params.position.line, params.text)


@handles(p.Requests.SET_VIEW)
def set_view(ls: ContextServer, params: p.SetViewParams) -> p.SetViewResult:
    return ls.session.route(params.workspace).set_view(list(params.ids), params.view)


@handles(p.Requests.ADD_MAP)
async def add_map(ls: ContextServer, params: p.AddMapParams) -> p.AddResult:
    """Parsed in worker processes and ranked in a thread: others are answered meanwhile."""
    workspace = ls.session.route(params.workspace)
    return await workspace.add_map(
        ls.service.workers, params.query, params.tokens, params.metadata, params.pin
    )
