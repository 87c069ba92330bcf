"""Commands that take text rather than files: add-text, tokens."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from contextls.protocol import (
    AddTextParams,
    CountTokensParams,
    ModelCount,
    Requests,
)
from contextls_client.commands.add import file_target
from contextls_client.console import Console
from contextls_client.human import item_line, refusal_text, tokens, window_line
from contextls_client.reports import (
    BulkRefusal,
    ErrorDocument,
    ErrorReport,
    TokenCount,
    TokensReport,
)
from contextls_client.session import Invocation, UsageError
from contextls_client.targets import AddTarget

STDIN = "-"


def run_add_text(invocation: Invocation) -> int:
    args = invocation.args
    console = invocation.console
    content = _text_argument_or_stdin(args.text, console.note)
    if not content.strip():
        raise UsageError("nothing to add: the text is empty")
    with invocation.session() as session:
        result = session.client.call(
            Requests.ADD_TEXT,
            AddTextParams(
                workspace=session.workspace,
                kind=args.kind,
                content=content,
                language=args.language,
                pin=args.pin,
            ),
        )
        console.out(f"added {item_line(result.item)}" + (", pinned" if result.item.pinned else ""))
        session.warn(result.warnings)
        session.evicted(result.evicted)
    console.json(result)
    console.out(window_line(result.status))
    return 0


def run_tokens(invocation: Invocation) -> int:
    """Count stdin (``-``) and the workspace's files, folders and globs, in one request.

    The server reads the files as ``add`` would: a file outside the workspace, a named
    pipe or a device is refused, named, and the others are counted all the same. Text
    from elsewhere comes on stdin (``cat FILE | contextls tokens -``).
    """
    args = invocation.args
    console = invocation.console
    cwd = Path.cwd()
    text = _read_stdin(console.note) if STDIN in args.sources else ""
    targets = [file_target(AddTarget(source), cwd) for source in args.sources if source != STDIN]
    with invocation.session() as session:
        result = session.client.call(
            Requests.COUNT_TOKENS,
            CountTokensParams(
                workspace=session.workspace,
                text=text,
                encoding=args.encoding,
                models=args.model or None,
                targets=targets or None,
            ),
        )
    console.note(*(f"contextls: {refusal_text(refusal)}" for refusal in result.refused))
    console.note(*(f"skipped {skip.path} ({skip.reason})" for skip in result.skipped))
    ordered = result.counts
    # The files in the order the server read them, then what came on stdin.
    counts = [_count(file.path, ordered, index) for index, file in enumerate(result.files)]
    if STDIN in args.sources:
        counts.append(
            TokenCount(
                source=STDIN,
                tokens=result.tokens - sum(f.tokens for f in result.files),
                by_model={m.model: m.tokens - sum(f.tokens for f in m.files) for m in ordered},
            )
        )
    if not counts and result.refused:
        console.json(
            ErrorDocument(
                error=ErrorReport(
                    code=result.refused[0].code,
                    message="; ".join(refusal_text(r) for r in result.refused),
                    data=BulkRefusal(refused=result.refused, skipped=result.skipped),
                )
            )
        )
        return 1
    console.json(
        TokensReport(
            sources=counts,
            total=result.tokens,
            encoding=result.encoding,
            model=result.model,
            totals=ordered,
            skipped=result.skipped,
            refused=result.refused,
        )
    )
    _print_counts(console, counts, ordered)
    return 1 if result.refused else 0


def _print_counts(console: Console, counts: list[TokenCount], ordered: list[ModelCount]) -> None:
    if len(counts) == 1 and len(ordered) == 1:
        console.out(f"{tokens(ordered[0].tokens)} in {_named(ordered[0])}")
        return
    names = [m.model for m in ordered]
    width = max(len(c.source) for c in [*counts, TokenCount(source="total", tokens=0)])
    columns = [max(len(name), 8) for name in names]
    if len(names) > 1:
        heads = "  ".join(f"{n:>{w}}" for n, w in zip(names, columns, strict=True))
        console.out(f"{'':<{width}}  {heads}")
    for c in [
        *counts,
        TokenCount(source="total", tokens=0, by_model={m.model: m.tokens for m in ordered}),
    ]:
        cells = "  ".join(
            f"{c.by_model.get(n, 0):>{w},}" for n, w in zip(names, columns, strict=True)
        )
        if len(names) > 1:
            console.out(f"{c.source:<{width}}  {cells}")
        else:
            named = f" in {_named(ordered[0])}" if c.source == "total" else ""
            console.out(f"{c.source:<{width}}  {cells.strip()}{named}")
    if len(names) > 1:
        console.out(*(_named(m) for m in ordered))


def _named(count: ModelCount) -> str:
    """``claude-opus-4.7 (claude-v4.7), exact`` or ``gemini-2.5 (...), estimate (...)``."""
    return f"{count.model} ({count.encoding}), {count.label}"


def _count(source: str, models: list[ModelCount], file: int | None) -> TokenCount:
    by_model = {m.model: (m.files[file].tokens if file is not None else m.tokens) for m in models}
    return TokenCount(source=source, tokens=next(iter(by_model.values()), 0), by_model=by_model)


def _text_argument_or_stdin(text: str | None, note: Callable[[str], None]) -> str:
    if text is not None and text != STDIN:
        return text
    if text is None and sys.stdin.isatty():
        raise UsageError("give the text as an argument, or pipe it in: ... | contextls add-text")
    return _read_stdin(note)


_stdin: list[bytes] = []
"""Standard input, once read: a command retried (its daemon went away) reads it again."""


def _read_stdin(note: Callable[[str], None]) -> str:
    """Standard input as text; bytes that are not UTF-8 become U+FFFD, and we say so."""
    if not _stdin:
        _stdin.append(sys.stdin.buffer.read())
    data = _stdin[0]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        note("the input is not valid UTF-8: the bytes that are not were replaced by U+FFFD")
        return data.decode("utf-8", errors="replace")
