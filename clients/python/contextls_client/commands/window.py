"""Commands that read or edit the window: ls, show, status, rm, pin, unpin, clear."""

from __future__ import annotations

import shutil

from contextls.common.places import resolve_storage
from contextls.protocol import (
    ClearParams,
    ListParams,
    PinParams,
    RefreshParams,
    RemoveParams,
    RenderParams,
    Requests,
    StatusParams,
)
from contextls_client.commands._ids import targets
from contextls_client.human import (
    item_line,
    listing_lines,
    plural,
    render_notes,
    status_report,
    window_line,
)
from contextls_client.reports import PinReport
from contextls_client.session import Invocation, UsageError


def run_ls(invocation: Invocation) -> int:
    args = invocation.args
    console = invocation.console
    with invocation.session() as session:
        listing = session.client.call(
            Requests.LIST,
            ListParams(workspace=session.workspace, kinds=args.kind, limit=args.limit),
        )
        status = session.client.call(
            Requests.STATUS, StatusParams(workspace=session.workspace)
        )
    console.json(listing)
    width = shutil.get_terminal_size().columns if console.is_terminal else None
    console.out(*listing_lines(listing.items, status, width))
    return 0


def run_show(invocation: Invocation) -> int:
    args = invocation.args
    console = invocation.console
    if args.auto and not args.query:
        raise UsageError("--auto needs --query: say what the archived items should be about")
    with invocation.session() as session:
        rendered = session.client.call(
            Requests.RENDER,
            RenderParams(
                workspace=session.workspace,
                format=args.format,
                kinds=args.kind,
                limit=args.limit,
                max_tokens=args.max_tokens,
                query=args.query,
                auto_retrieve=args.auto,
            ),
        )
    if console.json_mode:
        console.json(rendered)
    elif rendered.text:
        # Only the context goes to stdout, so `contextls show | llm` gets nothing else.
        console.raw(rendered.text if rendered.text.endswith("\n") else rendered.text + "\n")
    console.note(*render_notes(rendered, args.max_tokens))
    return 0


def run_status(invocation: Invocation) -> int:
    console = invocation.console
    with invocation.session() as session:
        status = session.client.call(
            Requests.STATUS, StatusParams(workspace=session.workspace)
        )
    console.json(status)
    database = resolve_storage(invocation.place.storage)
    console.out(*status_report(status, database, ascii_only=console.ascii_only))
    return 0


def run_rm(invocation: Invocation) -> int:
    console = invocation.console
    with invocation.session() as session:
        ids = targets(session, invocation.args.ids)
        result = session.client.call(
            Requests.REMOVE, RemoveParams(workspace=session.workspace, ids=ids)
        )
    console.json(result)
    console.out(*merged_lines(result.merged))
    console.out(f"removed {', '.join(result.removed)}", window_line(result.status))
    return 0


def run_refresh(invocation: Invocation) -> int:
    """Read stale items (or the ones named) again from their files."""
    console = invocation.console
    with invocation.session() as session:
        ids = targets(session, invocation.args.ids) if invocation.args.ids else None
        result = session.client.call(
            Requests.REFRESH, RefreshParams(workspace=session.workspace, ids=ids)
        )
        session.evicted(result.evicted)
    console.json(result)
    if not result.refreshed:
        console.out("nothing is stale: every item holds its file's text as it is now")
    console.out(*(f"read {item_line(item)} again" for item in result.refreshed))
    console.out(
        *(
            f"the text it had is archived as {item.id}; `contextls restore {item.id}` brings "
            "it back"
            for item in result.archived
        )
    )
    console.out(window_line(result.status))
    return 0


def run_pin(invocation: Invocation) -> int:
    return _set_pinned(invocation, pinned=True)


def run_unpin(invocation: Invocation) -> int:
    return _set_pinned(invocation, pinned=False)


def _set_pinned(invocation: Invocation, pinned: bool) -> int:
    console = invocation.console
    verb = "pinned" if pinned else "unpinned"
    results = []
    with invocation.session() as session:
        for target in targets(session, invocation.args.ids):
            result = session.client.call(
                Requests.PIN, PinParams(workspace=session.workspace, id=target, pin=pinned)
            )
            results.append(result)
            console.out(*merged_lines(result.merged), f"{verb} {item_line(result.item)}")
            session.evicted(result.evicted)
    console.json(
        PinReport(
            items=list({result.item.id: result.item for result in results}.values()),
            merged={asked: now for result in results for asked, now in result.merged.items()},
            evicted=[item for result in results for item in result.evicted],
            status=results[-1].status,
        )
    )
    console.out(window_line(results[-1].status))
    return 0


def merged_lines(merged: dict[str, str]) -> list[str]:
    return [f"{asked} was merged into {now}" for asked, now in merged.items()]


def run_clear(invocation: Invocation) -> int:
    keep_pinned: bool = invocation.args.keep_pinned
    console = invocation.console
    with invocation.session() as session:
        result = session.client.call(
            Requests.CLEAR, ClearParams(workspace=session.workspace, keep_pinned=keep_pinned)
        )
    console.json(result)
    kept = f"; kept {plural(result.status.pinned_count, 'pinned item')}" if keep_pinned else ""
    console.out(
        f"cleared {plural(result.cleared, 'item')} to the archive{kept}",
        window_line(result.status),
    )
    return 0
