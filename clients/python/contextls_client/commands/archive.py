"""Commands on the archive of evicted items: search, restore."""

from __future__ import annotations

import time
from typing import Final

from contextls.protocol import (
    Requests,
    RestoreParams,
    SearchHit,
    SearchParams,
    SemanticStatus,
    StatusParams,
)
from contextls_client.commands._ids import item_ids
from contextls_client.human import count, item_line, window_line
from contextls_client.session import Invocation, UsageError, WorkspaceSession

SNIPPET_WIDTH: Final = 160
WAIT_POLL_SECONDS: Final = 0.5
"""How often ``search --wait`` asks how much is left (the daemon embeds between requests)."""
BOLD: Final = ("\x1b[1m", "\x1b[0m")


def run_search(invocation: Invocation) -> int:
    args = invocation.args
    console = invocation.console
    query = " ".join(args.query).strip()
    if not query:
        raise UsageError("give words to search for: contextls search WORDS")
    with invocation.session() as session:
        if args.wait:
            _wait_for_embeddings(invocation, session)
        result = session.client.call(
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
        console.note(f"nothing in the archive matches {query!r}")
        return 1  # as grep: found nothing
    now_ms = time.time() * 1000
    for hit in result.hits:
        when = _ago(now_ms - hit.archived_at) if hit.archived_at else ""
        details = "; ".join(
            part
            for part in (archived_words(hit.reason, when), found_words(hit, result.mode))
            if part
        )
        console.out(f"{item_line(hit.item)}  [{details}]")
        snippet = _snippet(hit, console.styled)
        if snippet:
            console.out(f"    {snippet}")
    console.out("", "`contextls restore ID` puts an item back in the window")
    return 0


_ARCHIVED_BECAUSE: Final = {
    "maxTokens": "evicted to stay within maxTokens",
    "maxItems": "evicted to stay within maxItems",
    "budget": "evicted when the adaptive budget shrank",
    "removed": "removed",
    "cleared": "cleared",
}
_FOUND_BY: Final = {
    ("keyword",): "found by its words",
    ("semantic",): "found by its meaning",
    ("keyword", "semantic"): "found by its words and meaning",
}
_SEARCHED_BY: Final = {
    "keyword": {"keyword"},
    "semantic": {"semantic"},
    "hybrid": {"keyword", "semantic"},
}


def archived_words(reason: str, when: str) -> str:
    """How the item left the window, and when: ``evicted to stay within maxTokens 3 min
    ago``."""
    why = _ARCHIVED_BECAUSE.get(reason, f"archived ({reason})" if reason else "archived")
    return f"{why} {when}".strip()


def found_words(hit: SearchHit, mode: str) -> str:
    """How the search that ran found the hit, and its score. A keyword search that also
    weighed the hit's meaning found it by its words; the JSON's ``modes`` keeps the
    evidence."""
    ran = _SEARCHED_BY.get(mode, {"keyword", "semantic"})
    found = tuple(sorted({str(mode) for mode in hit.modes} & ran)) or tuple(sorted(ran))
    words = _FOUND_BY.get(found, "found")
    return f"{words}, score {hit.score:.3g}" if hit.score else words


def _snippet(hit: SearchHit, styled: bool) -> str:
    """The hit's snippet, cut to a line, its matches in bold on a terminal."""
    text = hit.snippet[:SNIPPET_WIDTH]
    cut = len(hit.snippet) > SNIPPET_WIDTH
    if cut:
        text = text[:-1]
    if styled:
        on, off = BOLD
        for start, end in sorted(hit.highlights, reverse=True):
            if end <= len(text):
                text = text[:start] + on + text[start:end] + off + text[end:]
    return text + ("…" if cut else "")


def _wait_for_embeddings(invocation: Invocation, session: WorkspaceSession) -> None:
    """Until every item of the workspace has its vectors (or search by meaning is off),
    saying on stderr how many are left."""
    console = invocation.console
    shown = False
    while True:
        status = session.client.call(
            Requests.STATUS, StatusParams(workspace=session.workspace)
        )
        semantic = status.semantic
        left = _left_to_embed(semantic)
        if not left:
            break
        if console.stderr.isatty():
            console.stderr.write(f"\rembedding: {count(left)} items left to embed ")
            console.stderr.flush()
            shown = True
        elif not shown:
            console.note(f"embedding {count(left)} items before searching…")
            shown = True
        time.sleep(WAIT_POLL_SECONDS)  # the daemon embeds while nobody asks
    if shown and console.stderr.isatty():
        console.stderr.write("\r" + " " * 40 + "\r")


def _left_to_embed(semantic: SemanticStatus | None) -> int:
    if semantic is None or not semantic.available:
        return 0
    return semantic.pending + semantic.window_pending


def run_restore(invocation: Invocation) -> int:
    args = invocation.args
    ids = item_ids(args.ids)
    console = invocation.console
    with invocation.session() as session:
        result = session.client.call(
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
