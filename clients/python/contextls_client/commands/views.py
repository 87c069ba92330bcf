"""``contextls expand ID…`` shows items whole again; ``contextls outline ID…`` shows
files (and classes added by name) as their outlines (``contextls/setView``)."""

from __future__ import annotations

from typing import Literal

from contextls.protocol import Requests, SetViewParams
from contextls_client.commands._ids import targets
from contextls_client.human import item_line, window_line
from contextls_client.session import Invocation


def run_expand(invocation: Invocation) -> int:
    return _set_view(invocation, "whole")


def run_outline(invocation: Invocation) -> int:
    return _set_view(invocation, "outline")


def _set_view(invocation: Invocation, view: Literal["whole", "outline"]) -> int:
    console = invocation.console
    with invocation.session() as session:
        ids = targets(session, invocation.args.ids)
        result = session.client.call(
            Requests.SET_VIEW, SetViewParams(workspace=session.workspace, ids=ids, view=view)
        )
        session.evicted(result.evicted)
    console.json(result)
    shown = "whole" if view == "whole" else "as its outline"
    if not result.items:
        console.out(f"nothing changed: {'they are' if len(ids) > 1 else 'it is'} shown {shown}")
    console.out(*(f"showing {item_line(item)} {shown}" for item in result.items))
    console.out(*(f"left whole, nothing to hide: {item_line(item)}" for item in result.kept_whole))
    console.out(window_line(result.status))
    return 0
