"""Handlers of the requests that read or change the archive by a query: a search, a
forget. What a search does first (load the model, embed a small backlog, catch the
keyword index up) runs in a worker thread or in bounded turns, and a forget's scrub at
a turn of its own, so the requests of other clients are answered in between."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeVar

from contextls import protocol as p
from contextls.core.errors import ContextError
from contextls.lsp.jsonrpc import to_jsonrpc
from contextls.lsp.registry import handles
from contextls.lsp.server import ContextServer

Answer = TypeVar("Answer")


@handles(p.Requests.SEARCH)
def search(ls: ContextServer, params: p.SearchParams) -> p.SearchResult | Awaitable[p.SearchResult]:
    def answer() -> p.SearchResult:
        reader = ls.session.route(params.workspace).reader
        return reader.search(params.query, params.limit, params.kinds, params.mode)

    if prepares(ls, params.workspace, params.query):
        return once_prepared(ls, params.workspace, answer, params.query)
    return answer()


def prepares(ls: ContextServer, workspace: str | None, query: str | None = None) -> bool:
    """Whether a search here has work to do first (see ``once_prepared``)."""
    reader = ls.session.route(workspace).reader
    return (
        reader.search_prepares()
        or reader.index_behind()
        or (query is not None and reader.query_waits(query))
    )


async def once_prepared(
    ls: ContextServer,
    workspace: str | None,
    answer: Callable[[], Answer | Awaitable[Answer]],
    query: str | None = None,
) -> Answer:
    """``answer()`` once a worker thread has done what a search does first
    (``Reading.prepare_search``; with ``query``, its vector too): on the event loop, a
    process's first search (or render with a query, or forget by one) held every client
    ~0.6 s as the model loaded, a search after an eviction up to ~0.5 s as it embedded
    the evicted items. Requests that come meanwhile wait for the same preparation, and
    are answered in the order they came."""
    reader = ls.session.route(workspace).reader
    if reader.search_prepares():
        key = (id(reader.meaning()), reader.state.root_uri)
        preparing = _preparing.get(key)
        if preparing is None or preparing.done():
            preparing = _preparing[key] = asyncio.ensure_future(
                asyncio.to_thread(reader.prepare_search)
            )
        await asyncio.shield(preparing)  # a cancelled request leaves it to the others
    # The keyword index catches up a bounded batch a turn (the search would index the
    # whole backlog in one), the other clients' requests answered between them.
    while ls.service.index_some(prune=False):
        await after_other_clients()
    # The query's vector, made in a thread (kept ones are found there too: its words are
    # read off the loop): the search on the loop would wait for the model's process,
    # which may be embedding a batch of the backlog (~0.1 s and more).
    if query is not None:
        await asyncio.to_thread(ls.session.route(workspace).reader.prepare_query, query)
    answered = answer()
    return await answered if inspect.isawaitable(answered) else answered


_preparing: dict[tuple[int, str], asyncio.Future[None]] = {}
"""The preparation for a search under way, by search provider and window."""


@handles(p.Requests.FORGET)
async def forget(ls: ContextServer, params: p.ForgetParams) -> p.ForgetResult:
    """The deletes committed in one turn, the scrub (a rewrite of the file) at a later
    one, after the requests the loop read meanwhile, and then the answer: together they
    held every client ~0.3 s for a forget of a thousand items."""

    def answer() -> p.ForgetResult:
        lifecycle = ls.session.route(params.workspace).lifecycle
        return lifecycle.forget(params.ids, params.query, params.dry_run, params.paths)

    with ls.service.scrubbing.held():
        if params.query and prepares(ls, params.workspace):
            result = await once_prepared(ls, params.workspace, answer)
        else:
            result = answer()
        if result.dry_run or not result.forgotten:
            return result
        failure = ls.service.commit()
        if failure is not None:
            raise to_jsonrpc(ContextError(failure, p.ErrorCode.STORAGE))
        # Too late to refuse a cancel: the forget is committed, and answered as done.
        with contextlib.suppress(asyncio.CancelledError):
            await after_other_clients()
    return result  # its answer leaves after the commit at the end of its turn: the scrub


async def after_other_clients() -> None:
    """Two turns on: the reads the loop finds meanwhile are handled before the second."""
    for _ in range(2):
        await asyncio.sleep(0)
