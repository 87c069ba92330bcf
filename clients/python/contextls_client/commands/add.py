"""``contextls add PATH[:START[-END]]… [--pin]``: files, line ranges, directories, globs.

One ``contextls/addFiles`` request: the server expands directories and globs, plans
the set as a whole and answers with what it did (or, with ``--dry-run``, what it
would do, by the same code). The set never evicts its own files; a set that cannot
fit beside the pinned items changes nothing; one that would evict more than half
of the window needs ``--force``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import msgspec

from contextls.protocol import (
    AddFilesParams,
    AddFilesResult,
    ContextItem,
    ErrorCode,
    FileTarget,
    NoRoomData,
    PinnedGrowth,
    Requests,
)
from contextls_client.commands.add_symbol import (
    add_map,
    add_symbols,
    is_symbol_target,
    split_target,
)
from contextls_client.human import count, item_line, plural, tokens, window_line
from contextls_client.messages import ContextlsError
from contextls_client.session import Invocation, Session
from contextls_client.targets import AddTarget, TargetError, parse_target

ITEMISED: Final = 20
"""Up to this many added items are listed one per line; more are summed up."""
SKIPS_NAMED: Final = 5
"""Up to this many skipped files are named; more are only counted."""


async def run_add(invocation: Invocation) -> int:
    args = invocation.args
    cwd = Path.cwd()
    if args.map:
        if args.targets or args.symbol:
            raise TargetError("--map adds the map alone; add files or symbols with another add")
        return await add_map(invocation)
    if args.query or args.map_tokens:
        raise TargetError("--query and --map-tokens go with --map")
    if not args.targets and not args.symbol:
        raise TargetError(
            "name what to add: a file, FILE::NAME, a folder, a glob, --symbol or --map"
        )
    named = [split_target(text, cwd) for text in args.targets if is_symbol_target(text)]
    named += [(None, name) for name in args.symbol or ()]
    paths = [text for text in args.targets if not is_symbol_target(text)]
    if named:
        async with invocation.session() as session:
            refused = await add_symbols(invocation, session, named)
        if not paths:
            return refused
    targets = [file_target(parse_target(text), cwd) for text in paths]
    params = AddFilesParams(
        targets=targets,
        language=args.language,
        pin=args.pin,
        force=args.force,
        dry_run=args.dry_run,
        outline=args.outline,
    )
    async with invocation.session() as session:
        params.workspace = session.workspace
        try:
            result = await session.client.call(Requests.ADD_FILES, params)
        except ContextlsError as error:
            return _refused(invocation, error)
        if args.dry_run:
            _print_plan(invocation, result, needs_force=False)
            return 0
        _print_added(invocation, session, result)
    return 1 if result.refused or not result.items else 0


def file_target(target: AddTarget, cwd: Path) -> FileTarget:
    """An argument as the server takes it: a file or folder URI (with its lines), or an
    absolute glob."""
    literal = cwd / target.path
    if target.is_glob and not literal.exists():
        return FileTarget(glob=str(literal))
    return FileTarget(
        uri=literal.absolute().as_uri(),
        range=target.lines.to_range() if target.lines is not None else None,
    )


def _refused(invocation: Invocation, error: ContextlsError) -> int:
    """The whole add was refused: say why in this command's words, and what to do."""
    console = invocation.console
    if error.code == ErrorCode.NEEDS_FORCE and error.data is not None:
        plan = msgspec.convert(error.data, AddFilesResult)
        if invocation.args.dry_run:
            _print_plan(invocation, plan, needs_force=True)
            return 0
        held = plan.status.item_count
        console.note(
            f"contextls: adding {plural(len(plan.items), 'file')} ({tokens(plan.tokens)}) would "
            f"evict {len(plan.evicted)} of the window's {plural(held, 'item')} "
            f"({tokens(sum(item.tokens for item in plan.evicted))}), more than half of it; "
            "nothing was added. `--dry-run` lists them, `--force` adds anyway"
        )
        console.json({"error": {"code": error.code, "message": error.message}, "plan": plan})
        return 1
    if error.code == ErrorCode.NO_ROOM and error.data is not None:
        figures = msgspec.convert(error.data, NoRoomData)
        console.json({"error": {"code": error.code, "message": error.message}, "room": figures})
    else:
        console.json({"error": {"code": error.code, "message": error.message}})
    if invocation.args.dry_run:
        console.note(f"contextls: the add would be refused: {error.message}")
    else:
        console.note(f"contextls: {error.message}")
    return 1


def _print_plan(invocation: Invocation, plan: AddFilesResult, needs_force: bool) -> None:
    console = invocation.console
    console.json(plan)
    console.out(
        f"would add {plural(len(plan.items), 'file')} ({tokens(plan.tokens)})",
        *(f"  {item.label}" for item in plan.items),
    )
    if plan.evicted:
        console.out(
            f"would evict {plural(len(plan.evicted), 'item')}:",
            *(f"  {item_line(item)}" for item in plan.evicted),
        )
    else:
        console.out("would evict nothing")
    console.out(*_pinned_growth_lines(plan))
    if needs_force:
        console.out("that is more than half of the window: the add needs --force")
    _report_left_out(invocation, plan)


def _print_added(invocation: Invocation, session: Session, result: AddFilesResult) -> None:
    console = invocation.console
    if len(result.items) <= ITEMISED:
        console.out(*(_added_line(item, result) for item in result.items))
    elif result.items:
        console.out(f"added {plural(len(result.items), 'item')} ({tokens(result.tokens)})")
        console.out(*_pinned_growth_lines(result))
    session.warn(result.warnings)
    session.evicted(result.evicted)
    _report_left_out(invocation, result)
    console.json(result)
    console.out(window_line(result.status))


def _added_line(item: ContextItem, result: AddFilesResult) -> str:
    line = f"added {item_line(item)}" + (", pinned" if item.pinned else "")
    absorbed = [old for old, into in result.merged.items() if into == item.id]
    if absorbed:
        line += f"; merged {', '.join(absorbed)} into it"
        grown = next((g for g in result.pinned_growth if g.id == item.id), None)
        if grown is not None:
            line += f" ({_grown_words(grown)})"
    return line


def _pinned_growth_lines(result: AddFilesResult) -> list[str]:
    return [f"{grown.id} ({grown.label}): {_grown_words(grown)}" for grown in result.pinned_growth]


def _grown_words(grown: PinnedGrowth) -> str:
    """Never silent: a pinned region that grew (into a whole file, say) takes more budget."""
    return (
        f"pinned, as what it absorbed was: {tokens(grown.tokens_before)} pinned before, "
        f"{count(grown.tokens_after)} now; `contextls unpin {grown.id}` lets it go"
    )


def _report_left_out(invocation: Invocation, result: AddFilesResult) -> None:
    console = invocation.console
    console.note(*(f"contextls: {refusal.message}" for refusal in result.refused))
    if result.skipped:
        reasons: dict[str, int] = {}
        for skip in result.skipped:
            reasons[skip.reason] = reasons.get(skip.reason, 0) + 1
        detail = ", ".join(f"{number} {reason}" for reason, number in reasons.items())
        console.note(f"skipped {plural(len(result.skipped), 'file')} while expanding: {detail}")
        secret = [skip for skip in result.skipped if skip.reason.startswith("may hold secrets")]
        named = result.skipped if len(result.skipped) <= SKIPS_NAMED else secret
        console.note(*(f"  {skip.path} ({skip.reason})" for skip in named))
    if not result.items and not result.refused and not result.dry_run:
        console.note("contextls: nothing was added")
