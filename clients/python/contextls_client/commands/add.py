"""``contextls add PATH[:START[-END]]… [--pin]``: files, line ranges, directories, globs.

One ``contextls/addFiles`` request: the server expands directories and globs, plans
the set as a whole and answers with what it did (or, with ``--dry-run``, what it
would do, by the same code). The set never evicts its own files; a set that cannot
fit beside the pinned items changes nothing; one that would evict more than half
of the window needs ``--force``.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from contextls.protocol import (
    AddFilesParams,
    AddFilesResult,
    ErrorCode,
    FileTarget,
    Requests,
    SkippedFile,
    TargetRefusal,
)
from contextls_client.add_words import (
    added_lines,
    left_out_lines,
    needs_force_words,
    pinned_growth_lines,
    refused_message,
)
from contextls_client.commands.add_symbol import (
    add_map,
    add_symbol,
    is_symbol_target,
    split_target,
)
from contextls_client.human import item_line, plural, tokens, window_line
from contextls_client.messages import ContextlsError
from contextls_client.reports import BulkRefusal, ErrorDocument, ErrorReport
from contextls_client.session import Invocation, WorkspaceSession
from contextls_client.targets import AddTarget, TargetError, parse_target


def run_add(invocation: Invocation) -> int:
    """Everything named is added in one session and answered as one ``AddFilesResult``
    (``--json``): files, regions, definitions by name and the map alike; or, when
    nothing could be added, one error document."""
    args = invocation.args
    cwd = Path.cwd()
    if args.map:
        if args.targets or args.symbol:
            raise TargetError("--map adds the map alone; add files or symbols with another add")
    elif args.query or args.map_tokens:
        raise TargetError("--query and --map-tokens go with --map")
    elif not args.targets and not args.symbol:
        raise TargetError(
            "name what to add: a file, FILE::NAME, a folder, a glob, --symbol or --map"
        )
    named = [(text, *split_target(text, cwd)) for text in args.targets if is_symbol_target(text)]
    named += [(f"--symbol {name}", None, name) for name in args.symbol or ()]
    paths = [text for text in args.targets if not is_symbol_target(text)]
    targets = [file_target(parse_target(text), cwd) for text in paths]
    outcome = AddOutcome()
    with invocation.session() as session:
        if args.map:
            outcome.take("--map", add_map(invocation, session))
        for shown, uri, name in named:
            outcome.take(shown, add_symbol(invocation, session, uri, name))
        if targets:
            params = AddFilesParams(
                workspace=session.workspace,
                targets=targets,
                language=args.language,
                pin=args.pin,
                force=args.force,
                dry_run=args.dry_run,
                outline=args.outline,
            )
            try:
                result = session.client.call(Requests.ADD_FILES, params)
            except ContextlsError as error:
                if not outcome.added:
                    return _refused(invocation, error)
                _say_refused(invocation, error)
                outcome.refuse(
                    [TargetRefusal(target=t, code=error.code, message=error.message) for t in paths]
                )
            else:
                if args.dry_run:
                    _print_plan(invocation, result, needs_force=False)
                    return 0
                _print_added(invocation, session, result)
                outcome.merge(result)
    return outcome.finish(invocation)


class AddOutcome:
    """What one ``contextls add`` did, over every request it took: one document."""

    def __init__(self) -> None:
        self.result: AddFilesResult | None = None
        self.refused: list[TargetRefusal] = []
        self.errors: list[ContextlsError] = []

    @property
    def added(self) -> bool:
        return self.result is not None and bool(self.result.items)

    def take(self, target: str, answer: AddFilesResult | ContextlsError) -> None:
        if isinstance(answer, ContextlsError):
            self.errors.append(answer)
            self.refuse([TargetRefusal(target=target, code=answer.code, message=answer.message)])
        else:
            self.merge(answer)

    def refuse(self, refusals: list[TargetRefusal]) -> None:
        self.refused.extend(refusals)

    def merge(self, later: AddFilesResult) -> None:
        earlier, self.result = self.result, later
        if earlier is None:
            return
        items = {item.id: item for item in [*earlier.items, *later.items]}
        self.result = msgspec.structs.replace(
            later,
            items=list(items.values()),
            evicted=[*earlier.evicted, *later.evicted],
            tokens=sum(item.tokens for item in items.values()),
            merged={**earlier.merged, **later.merged},
            pinned_growth=[*earlier.pinned_growth, *later.pinned_growth],
            skipped=[*earlier.skipped, *later.skipped],
            refused=[*earlier.refused, *later.refused],
            warnings=[*earlier.warnings, *later.warnings],
        )

    def finish(self, invocation: Invocation) -> int:
        """Print the one document; 0 when everything named is in the window, else 1."""
        console = invocation.console
        result = self.result
        refused = [*self.refused, *(result.refused if result is not None else [])]
        if result is None or not result.items:
            skipped = result.skipped if result is not None else []
            console.json(_error_document(refused, skipped, self.errors))
            if not refused:
                console.note("contextls: nothing was added")
            return 1
        result.refused = refused
        console.json(result)
        console.out(window_line(result.status))
        return 1 if refused else 0


def _error_document(
    refused: list[TargetRefusal], skipped: list[SkippedFile], errors: list[ContextlsError]
) -> ErrorDocument:
    """Nothing was added: the refusal, or the first with every one in ``data``."""
    if len(refused) == 1 and len(errors) == 1 and errors[0].data is not None:
        only = errors[0]
        return ErrorDocument(
            error=ErrorReport(code=only.code, message=only.message, data=only.data)
        )
    message = refused_message(refused)
    code = refused[0].code if refused else int(ErrorCode.INVALID_PARAMS)
    return ErrorDocument(
        error=ErrorReport(
            code=code,
            message=message,
            data=BulkRefusal(refused=refused, skipped=skipped),
        )
    )


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
    console.json(
        ErrorDocument(error=ErrorReport(code=error.code, message=error.message, data=error.data))
    )
    _say_refused(invocation, error)
    return 1


def _say_refused(invocation: Invocation, error: ContextlsError) -> None:
    console = invocation.console
    if error.code == ErrorCode.NEEDS_FORCE and error.data is not None:
        console.note(needs_force_words(msgspec.convert(error.data, AddFilesResult)))
    elif invocation.args.dry_run:
        console.note(f"contextls: the add would be refused: {error.message}")
    else:
        console.note(f"contextls: {error.message}")


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
    console.out(*pinned_growth_lines(plan))
    if needs_force:
        console.out("that is more than half of the window: the add needs --force")
    console.note(*left_out_lines(plan))


def _print_added(invocation: Invocation, session: WorkspaceSession, result: AddFilesResult) -> None:
    invocation.console.out(*added_lines(result))
    session.warn(result.warnings)
    session.evicted(result.evicted)
    invocation.console.note(*left_out_lines(result))
