"""Commands that take text rather than files: add-text, tokens."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from contextls.protocol import (
    AddTextParams,
    CountTokensParams,
    FileTarget,
    ModelCount,
    Requests,
)
from contextls_client.commands.add import file_target
from contextls_client.human import item_line, tokens, window_line
from contextls_client.reports import TokenCount, TokensReport
from contextls_client.session import Invocation, UnreadableInput, UsageError
from contextls_client.targets import AddTarget

STDIN = "-"


async def run_add_text(invocation: Invocation) -> int:
    args = invocation.args
    console = invocation.console
    content = _text_argument_or_stdin(args.text, console.note)
    if not content.strip():
        raise UsageError("nothing to add: the text is empty")
    async with invocation.session() as session:
        result = await session.client.call(
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


async def run_tokens(invocation: Invocation) -> int:
    """Count stdin, files (anywhere you can read them), and the workspace's folders and
    globs (expanded as ``add`` expands them, by the server)."""
    args = invocation.args
    console = invocation.console
    cwd = Path.cwd()
    texts: list[tuple[str, str]] = []
    expanded: list[FileTarget] = []
    for source in args.sources:
        if source != STDIN and (_is_pattern(source, cwd) or (cwd / source).is_dir()):
            expanded.append(file_target(AddTarget(source), cwd))
        else:
            texts.append((source, _read_source(source, console.note)))
    counts: list[TokenCount] = []
    totals: dict[str, ModelCount] = {}
    refused = False
    models = args.model or None
    async with invocation.session() as session:
        for source, text in texts:
            result = await session.client.call(
                Requests.COUNT_TOKENS,
                CountTokensParams(
                    workspace=session.workspace, text=text, encoding=args.encoding, models=models
                ),
            )
            counts.append(_count(source, result.counts, None))
            _add(totals, result.counts)
        if expanded:
            result = await session.client.call(
                Requests.COUNT_TOKENS,
                CountTokensParams(
                    workspace=session.workspace,
                    targets=expanded,
                    encoding=args.encoding,
                    models=models,
                ),
            )
            for index, file in enumerate(result.files):
                counts.append(_count(file.path, result.counts, index))
            _add(totals, result.counts)
            console.note(*(f"contextls: {refusal.message}" for refusal in result.refused))
            console.note(*(f"skipped {skip.path} ({skip.reason})" for skip in result.skipped))
            refused = bool(result.refused)
    total = sum(count.tokens for count in counts)
    ordered = list(totals.values())
    first = ordered[0] if ordered else None
    encoding = first.encoding if first else (args.encoding or "")
    if len(counts) == 1 and not expanded and len(ordered) == 1:
        console.json(result)
        console.out(f"{tokens(total)} in {_named(ordered[0])}")
        return 0
    console.json(
        TokensReport(
            sources=counts,
            total=total,
            encoding=encoding,
            model=first.model if first else "",
            totals=ordered,
        )
    )
    if counts:
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
        console.out(*(f"{_named(m)}" for m in ordered) if len(names) > 1 else ())
    return 1 if refused else 0


def _named(count: ModelCount) -> str:
    """``claude-opus-4.7 (claude-v4.7), exact`` or ``gemini-2.5 (...), estimate (...)``."""
    return f"{count.model} ({count.encoding}), {count.label}"


def _count(source: str, models: list[ModelCount], file: int | None) -> TokenCount:
    by_model = {m.model: (m.files[file].tokens if file is not None else m.tokens) for m in models}
    return TokenCount(source=source, tokens=next(iter(by_model.values()), 0), by_model=by_model)


def _add(totals: dict[str, ModelCount], models: list[ModelCount]) -> None:
    """Each model's running total, first asked first."""
    for m in models:
        tokens_ = m.tokens
        if m.model in totals:
            kept = totals[m.model]
            totals[m.model] = ModelCount(
                model=kept.model,
                encoding=kept.encoding,
                tokens=kept.tokens + tokens_,
                exact=kept.exact,
                label=kept.label,
            )
        else:
            totals[m.model] = ModelCount(
                model=m.model, encoding=m.encoding, tokens=tokens_, exact=m.exact, label=m.label
            )


def _is_pattern(source: str, cwd: Path) -> bool:
    return AddTarget(source).is_glob and not (cwd / source).exists()


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


def _read_source(source: str, note: Callable[[str], None]) -> str:
    if source == STDIN:
        return _read_stdin(note)
    path = Path(source)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UnreadableInput(f"cannot read {source}: {error.strerror or error}") from error
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnreadableInput(f"{source} is not UTF-8 text") from error
