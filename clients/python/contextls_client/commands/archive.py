"""Commands on the archive of evicted items: search, restore."""

from __future__ import annotations

import time

from contextls.protocol import Requests, RestoreParams, SearchParams
from contextls_client.commands._ids import item_ids
from contextls_client.human import item_line, window_line
from contextls_client.session import Invocation, UsageError

SNIPPET_WIDTH = 160


async def run_search(invocation: Invocation) -> int:
    args = invocation.args
    console = invocation.console
    query = " ".join(args.query).strip()
    if not query:
        raise UsageError("give words to search for: contextls search WORDS")
    async with invocation.session() as session:
        result = await session.client.call(
            Requests.SEARCH,
            SearchParams(
                workspace=session.workspace,
                query=query,
                limit=args.limit,
                kinds=args.kind,
                mode=args.mode,
            ),
        )
    console.json(result)
    if result.warning:
        console.note(f"warning: {result.warning}")
    if not result.hits:
        console.out(f"nothing in the archive matches {query!r}")
        return 0
    now_ms = time.time() * 1000
    for hit in result.hits:
        when = _ago(now_ms - hit.archived_at) if hit.archived_at else ""
        score = f"score {hit.score:.3g}" if hit.score else ""
        found_by = "+".join(hit.modes)
        details = ", ".join(part for part in (hit.reason, when, score, found_by) if part)
        console.out(f"{item_line(hit.item)}  [{details}]")
        snippet = " ".join(hit.snippet.split())
        if snippet:
            if len(snippet) > SNIPPET_WIDTH:
                snippet = snippet[: SNIPPET_WIDTH - 1] + "…"
            console.out(f"    {snippet}")
    console.out("", "`contextls restore ID` puts an item back in the window")
    return 0


async def run_restore(invocation: Invocation) -> int:
    args = invocation.args
    ids = item_ids(args.ids)
    console = invocation.console
    async with invocation.session() as session:
        result = await session.client.call(
            Requests.RESTORE, RestoreParams(workspace=session.workspace, ids=ids, pin=args.pin)
        )
        console.out(*(f"{asked} was merged into {now}" for asked, now in result.merged.items()))
        console.out(
            *(f"{item_id} is already in the window" for item_id in result.already_in_window)
        )
        console.out(*(f"restored {item_line(item)}" for item in result.items))
        session.evicted(result.evicted)
    console.json(result)
    console.out(window_line(result.status))
    return 0


def _ago(milliseconds: float) -> str:
    """``3 min ago`` style, coarse on purpose."""
    seconds = max(milliseconds / 1000, 0)
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            amount = int(seconds // size)
            return f"{amount} {unit}{'s' if unit == 'day' and amount > 1 else ''} ago"
    return "just now"
