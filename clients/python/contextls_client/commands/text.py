"""Commands that take text rather than files: add-text, tokens."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from contextls.protocol import AddTextParams, CountTokensParams, Requests
from contextls_client.human import item_line, tokens, window_line
from contextls_client.reports import TokenCount, TokensReport
from contextls_client.session import Invocation, UnreadableInput, UsageError

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
        console.note(*(f"contextls: warning: {warning}" for warning in result.warnings))
        session.evicted(result.evicted)
    console.json(result)
    console.out(window_line(result.status))
    return 0


async def run_tokens(invocation: Invocation) -> int:
    args = invocation.args
    console = invocation.console
    texts = [(source, _read_source(source, console.note)) for source in args.sources]
    counts = []
    async with invocation.session() as session:
        for source, text in texts:
            result = await session.client.call(
                Requests.COUNT_TOKENS,
                CountTokensParams(workspace=session.workspace, text=text, encoding=args.encoding),
            )
            counts.append((source, result))
    if len(counts) == 1:
        ((_, result),) = counts
        console.json(result)
        console.out(f"{tokens(result.tokens)} ({result.encoding})")
        return 0
    total = sum(result.tokens for _, result in counts)
    encoding = counts[0][1].encoding
    console.json(
        TokensReport(
            sources=[TokenCount(source=s, tokens=r.tokens) for s, r in counts],
            total=total,
            encoding=encoding,
        )
    )
    width = max(len(source) for source, _ in counts)
    console.out(*(f"{source:<{width}}  {tokens(r.tokens)}" for source, r in counts))
    console.out(f"{'total':<{width}}  {tokens(total)} ({encoding})")
    return 0


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
