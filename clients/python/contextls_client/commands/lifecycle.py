"""The archive's lifecycle: ``forget`` for good, ``export`` and ``import`` a window.

``forget`` takes ids or ``--query WORDS`` and removes every matching item from
the window and the archive, leaving no copy of its text in the database file;
it asks first (``--yes`` for scripts; ``--dry-run`` only lists). ``export``
prints one JSON document (``--archive`` adds the archive; ``-o FILE`` writes
it there); ``import FILE`` merges one into this workspace, paths re-rooted and
ids re-assigned (the mapping is printed).
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

from contextls.protocol import (
    ExportDocument,
    ExportParams,
    ForgetParams,
    ImportParams,
    Requests,
)
from contextls_client.commands._ids import item_ids
from contextls_client.human import item_line, plural, window_line
from contextls_client.session import Invocation, UnreadableInput, UsageError


async def run_forget(invocation: Invocation) -> int:
    args = invocation.args
    console = invocation.console
    query = " ".join(args.query or []).strip() or None
    ids = item_ids(args.ids) if args.ids else None
    if not ids and not query:
        raise UsageError("say what to forget: IDs, or --query WORDS")
    async with invocation.session() as session:
        params = ForgetParams(workspace=session.workspace, ids=ids, query=query, dry_run=True)
        planned = await session.client.call(Requests.FORGET, params)
        if not planned.forgotten:
            console.json(planned)
            console.out(f"nothing matches {query!r}; nothing was forgotten")
            return 0
        if args.dry_run:
            console.json(planned)
            console.out(
                f"would forget {plural(len(planned.forgotten), 'item')}:",
                *(f"  {item_line(item)}" for item in planned.forgotten),
            )
            return 0
        if not args.yes:
            if not sys.stdin.isatty():
                raise UsageError(
                    f"forgetting {plural(len(planned.forgotten), 'item')} cannot be undone; "
                    "add --yes (or --dry-run to see them)"
                )
            console.note(*(f"  {item_line(item)}" for item in planned.forgotten))
            answer = input(
                f"forget these {plural(len(planned.forgotten), 'item')} for good? [y/N] "
            )
            if answer.strip().lower() not in ("y", "yes"):
                console.note("nothing was forgotten")
                return 1
        params.dry_run = False
        result = await session.client.call(Requests.FORGET, params)
    console.json(result)
    console.out(*(f"forgot {item_line(item)}" for item in result.forgotten))
    console.out(window_line(result.status))
    return 0


async def run_export(invocation: Invocation) -> int:
    args = invocation.args
    async with invocation.session() as session:
        document = await session.client.call(
            Requests.EXPORT, ExportParams(workspace=session.workspace, archive=args.archive)
        )
    text = msgspec.json.format(msgspec.json.encode(document), indent=2).decode() + "\n"
    if args.output and args.output != "-":
        Path(args.output).write_text(text, encoding="utf-8")
        invocation.console.note(
            f"exported {plural(len(document.window), 'window item')}"
            + (f" and {plural(len(document.archive), 'archived item')}" if args.archive else "")
            + f" to {args.output}"
        )
    else:
        invocation.console.raw(text)
    return 0


async def run_import(invocation: Invocation) -> int:
    args = invocation.args
    console = invocation.console
    try:
        raw = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as error:
        raise UnreadableInput(f"cannot read {args.file}: {error.strerror or error}") from error
    try:
        document = msgspec.json.decode(raw, type=ExportDocument)
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise UnreadableInput(f"{args.file} is not a contextls export: {error}") from error
    async with invocation.session() as session:
        result = await session.client.call(
            Requests.IMPORT,
            ImportParams(workspace=session.workspace, document=document, dry_run=args.dry_run),
        )
        session.evicted(result.evicted)
    console.json(result)
    verb = "would import" if result.dry_run else "imported"
    console.out(
        f"{verb} {plural(len(result.added), 'item')} into the window and "
        f"{plural(len(result.archived), 'item')} into the archive"
    )
    console.out(*(f"  {old} -> {new}" for old, new in result.mapping.items()))
    console.out(window_line(result.status))
    return 0
