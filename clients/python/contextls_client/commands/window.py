"""Commands that read or edit the window: ls, show, status, rm, pin, unpin, clear."""

from __future__ import annotations

import re
import shutil
from typing import Final

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
    count,
    flags,
    item_line,
    plural,
    status_report,
    table,
    window_line,
)
from contextls_client.reports import PinReport
from contextls_client.session import Invocation, UsageError

LABEL_COLUMN = 2
_ID_WORDS: Final = re.compile(r"\bctx-[0-9]+\b")


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
    if not listing.items:
        console.out("the window is empty; `contextls add PATH` puts a file in it")
        return 0
    rows = [
        [item.id, item.kind, item.label, count(item.tokens), flags(item)] for item in listing.items
    ]
    width = shutil.get_terminal_size().columns if console.is_terminal else None
    console.out(
        *table(
            ["ID", "KIND", "LABEL", "TOKENS", "FLAGS"],
            rows,
            right_aligned=[3],
            shrink_column=LABEL_COLUMN,
            max_width=width,
        ),
        "",
        window_line(status),
    )
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
    if not rendered.item_ids and not rendered.history_ids:
        console.note("the window is empty; `contextls add PATH` puts a file in it")
    # The server's warnings explain the items they name (pinned items over the budget, a
    # format that frames items more heavily); one notice says why each other one is out.
    explained = {word for warning in rendered.warnings for word in _ID_WORDS.findall(warning)}
    unexplained = [item_id for item_id in rendered.omitted_ids if item_id not in explained]
    if unexplained:
        console.note(
            f"left out {plural(len(unexplained), 'item')} to stay within "
            f"{count(rendered.budget or args.max_tokens or 0)} tokens: " + ", ".join(unexplained)
        )
    if rendered.history_ids:
        console.note(
            "from the archive: "
            + ", ".join(
                f"{item_id} ({score:.2f})"
                for item_id, score in zip(
                    rendered.history_ids, rendered.history_scores, strict=False
                )
            )
        )
    if rendered.history_omitted:
        console.note(
            f"left out of the relevant history, to stay within {count(rendered.budget)} tokens: "
            + "; ".join(f"{left.id} ({left.reason})" for left in rendered.history_omitted)
        )
    console.note(*(f"contextls: {warning}" for warning in rendered.warnings))
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
