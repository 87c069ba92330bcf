"""The archive's lifecycle: ``forget`` for good, ``export`` and ``import`` a window.

``forget`` takes ids or ``--query WORDS`` and removes every matching item from
the window and the archive, leaving no copy of its text in the database file;
it asks first (``--yes`` for scripts; ``--dry-run`` only lists). ``export``
prints one JSON document (``--archive`` adds the archive; ``-o FILE`` writes
it there); ``import FILE`` merges one into this workspace, paths re-rooted and
ids re-assigned (the mapping is printed).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import msgspec

from contextls.protocol import (
    EXPORT_FORMAT,
    ExportDocument,
    ExportParams,
    ForgetParams,
    ImportParams,
    Requests,
)
from contextls_client.commands._ids import item_ids
from contextls_client.human import item_line, plural, window_line
from contextls_client.session import Invocation, UnreadableInput, UsageError


def run_forget(invocation: Invocation) -> int:
    args = invocation.args
    console = invocation.console
    query = " ".join(args.query or []).strip() or None
    ids = item_ids(args.ids) if args.ids else None
    if not ids and not query:
        raise UsageError("say what to forget: IDs, or --query WORDS")
    with invocation.session() as session:
        params = ForgetParams(workspace=session.workspace, ids=ids, query=query, dry_run=True)
        planned = session.client.call(Requests.FORGET, params)
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
        result = session.client.call(Requests.FORGET, params)
    console.json(result)
    console.out(*(f"forgot {item_line(item)}" for item in result.forgotten))
    console.out(window_line(result.status))
    return 0


def run_export(invocation: Invocation) -> int:
    args = invocation.args
    with invocation.session() as session:
        document = session.client.call(
            Requests.EXPORT, ExportParams(workspace=session.workspace, archive=args.archive)
        )
    text = msgspec.json.format(msgspec.json.encode(document), indent=2).decode() + "\n"
    if args.output and args.output != "-":
        write_private(Path(args.output), text)
        invocation.console.note(
            f"exported {plural(len(document.window), 'window item')}"
            + (f" and {plural(len(document.archive), 'archived item')}" if args.archive else "")
            + f" to {args.output}"
        )
    else:
        invocation.console.raw(text)
    return 0


def run_import(invocation: Invocation) -> int:
    args = invocation.args
    console = invocation.console
    try:
        raw = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as error:
        raise UnreadableInput(f"cannot read {args.file}: {error.strerror or error}") from error
    document = read_export(raw, args.file)
    with invocation.session() as session:
        result = session.client.call(
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
    if result.settings:
        taken = ", ".join(f"{key} {value}" for key, value in result.settings.items())
        console.out(f"the window had no settings of its own and took the document's: {taken}")
    console.out(window_line(result.status))
    return 0


def read_export(raw: bytes, name: str) -> ExportDocument:
    """The export in ``raw``, or what it is instead, in words (not a decoder's)."""
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        raise UnreadableInput(f"{name} is not a contextls export: it is not JSON") from None
    if not isinstance(value, dict) or value.get("format") != EXPORT_FORMAT:
        what = "a JSON object of another kind" if isinstance(value, dict) else "JSON, not an object"
        raise UnreadableInput(
            f"{name} is not a contextls export ({what}; `contextls export` writes one)"
        )
    try:
        return msgspec.convert(value, type=ExportDocument)
    except msgspec.ValidationError as error:
        raise UnreadableInput(f"{name} is a contextls export with a problem: {error}") from None


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, readable by its owner alone (0600, as the database is):
    an export holds the whole context, the archive and private notes included."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        os.fchmod(out.fileno(), 0o600)  # a file that was there keeps its mode otherwise
        out.write(text)
