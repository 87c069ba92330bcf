"""``contextls add FILE::NAME`` and ``contextls add --symbol NAME``: a definition by its
name, found by the server's parser (``contextls/addSymbolByName``); ``contextls add
--map``: the ranked map of the repository (``contextls/addMap``).

``FILE::Parser.parse`` looks in one file, ``--symbol parse`` in the whole workspace;
a name that fits several definitions is refused with the list, each written as the
argument that names it alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import msgspec

from contextls.protocol import (
    AddFilesResult,
    AddMapParams,
    AddNamedSymbolParams,
    AddResult,
    AmbiguousSymbolData,
    ErrorCode,
    Requests,
)
from contextls_client.human import item_line
from contextls_client.messages import ContextlsError
from contextls_client.session import Invocation, WorkspaceSession

SEPARATOR: Final = "::"
LISTED: Final = 20
"""Candidates of an ambiguous name listed one per line."""


def is_symbol_target(text: str) -> bool:
    return SEPARATOR in text


def split_target(text: str, cwd: Path) -> tuple[str | None, str]:
    """``src/app.py::Parser.parse`` -> (the file's URI, ``Parser.parse``)."""
    path, _, name = text.partition(SEPARATOR)
    uri = (cwd / path).absolute().as_uri() if path else None
    return uri, name


def as_added(result: AddResult) -> AddFilesResult:
    """One item's answer in the shape of every ``contextls add --json``."""
    return AddFilesResult(
        items=[result.item],
        evicted=result.evicted,
        tokens=result.item.tokens,
        status=result.status,
        # A map that replaced an older one took its place as a merge would.
        merged=dict.fromkeys([*result.merged, *result.replaced], result.item.id),
        warnings=result.warnings,
        secrets=result.secrets,
    )


def add_symbol(
    invocation: Invocation, session: WorkspaceSession, uri: str | None, name: str
) -> AddFilesResult | ContextlsError:
    """Add the definition ``name`` (in the file ``uri``, else anywhere), saying what it did."""
    args = invocation.args
    console = invocation.console
    params = AddNamedSymbolParams(
        name=name,
        uri=uri,
        language=args.language,
        pin=args.pin,
        outline=getattr(args, "outline", False),
        workspace=session.workspace,
    )
    try:
        result = session.client.call(Requests.ADD_NAMED_SYMBOL, params)
    except ContextlsError as error:
        _refused(invocation, error, name)
        return error
    item = result.item
    if result.deduplicated:
        # The definition's lines are in the window already (its file whole, or the
        # definition itself): the answer names the item that holds them.
        console.out(
            f"nothing added: {name} is in the window already, in {item_line(item)}"
            + (", pinned" if item.pinned else "")
        )
    else:
        kind = item.metadata.get("symbolKind", "symbol")
        console.out(f"added {item_line(item)}, {kind}" + (", pinned" if item.pinned else ""))
    session.warn(result.warnings)
    session.evicted(result.evicted)
    return as_added(result)


def _refused(invocation: Invocation, error: ContextlsError, name: str) -> None:
    console = invocation.console
    if error.code != ErrorCode.AMBIGUOUS_SYMBOL or error.data is None:
        console.note(f"contextls: {error.message}")
        return
    found = msgspec.convert(error.data, AmbiguousSymbolData).candidates
    console.note(f"contextls: {name} names {len(found)} definitions; add one of them:")
    console.note(
        *(
            f"  contextls add {c.path}::{c.name}    ({c.kind}, lines {c.start_line}-{c.end_line})"
            for c in found[:LISTED]
        )
    )
    if len(found) > LISTED:
        console.note(f"  … and {len(found) - LISTED} more")


def add_map(invocation: Invocation, session: WorkspaceSession) -> AddFilesResult | ContextlsError:
    args = invocation.args
    console = invocation.console
    params = AddMapParams(
        workspace=session.workspace, query=args.query, tokens=args.map_tokens, pin=args.pin
    )
    try:
        result = session.client.call(Requests.ADD_MAP, params)
    except ContextlsError as error:
        console.note(f"contextls: {error.message}")
        return error
    item = result.item
    meta = item.metadata
    console.out(
        f"added {item_line(item)}: {meta.get('definitions', 0)} definitions ranked in "
        f"{meta.get('rankMs', 0)} ms, within {meta.get('mapTokens', 0):,} tokens"
        + (", pinned" if item.pinned else "")
    )
    for old in result.replaced:
        console.note(
            f"contextls: it replaces the map {old}, now in the archive; "
            f"`contextls restore {old}` brings it back"
        )
    session.evicted(result.evicted)
    return as_added(result)
