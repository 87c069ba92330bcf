"""``contextls add PATH[:START[-END]]… [--pin]``: files, line ranges, directories, globs."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from contextls.protocol import AddFileParams, AddRegionParams, AddResult, ErrorCode, Requests
from contextls_client.estimate import Estimate, estimate
from contextls_client.expand import PlannedAdd, plan_adds
from contextls_client.human import item_line, plural, tokens, window_line
from contextls_client.messages import ContextlsError
from contextls_client.progress import PROGRESS_THRESHOLD, ProgressBar
from contextls_client.reports import AddReport, Refusal, Skip
from contextls_client.session import Invocation, Session
from contextls_client.targets import parse_target

SKIPPED_WHEN_EXPANDING: Final[dict[int, str]] = {
    ErrorCode.BINARY_FILE: "binary",
    ErrorCode.FILE_TOO_LARGE: "too large",
    ErrorCode.ITEM_TOO_LARGE: "over the token budget",
    ErrorCode.NO_ROOM: "no room beside the pinned items",
    ErrorCode.FILE_NOT_FOUND: "gone",
}
"""Refusals that, for a file found by expansion, mean "leave it out" rather than "fail"."""

SKIPS_NAMED: Final = 5
"""Up to this many skipped files are named; more are only counted."""


async def run_add(invocation: Invocation) -> int:
    args = invocation.args
    console = invocation.console
    root = invocation.place.root
    plan = plan_adds([parse_target(text) for text in args.targets], Path.cwd(), root)
    for target in plan.empty_targets:
        console.note(f"{target}: no files to add")
    outside = [
        Refusal(
            target=target,
            code=ErrorCode.OUTSIDE_WORKSPACE,
            message=f"{target} is outside the workspace folder {root}",
        )
        for target in plan.outside
    ]
    console.note(*(f"contextls: {refusal.message}" for refusal in outside))
    report = AddReport(
        added=[],
        refused=outside,
        skipped=[
            *(
                Skip(path=invocation.display_path(p), reason="may hold secrets; name it to add it")
                for p in plan.skipped_secret
            ),
            *(Skip(path=invocation.display_path(p), reason="binary") for p in plan.skipped_binary),
        ],
        status=None,
    )
    itemised = len(plan.adds) <= PROGRESS_THRESHOLD
    if not plan.adds:
        _summarise(invocation, report)
        return 1 if report.refused else 0
    async with invocation.session() as session:
        if args.dry_run or (len(plan.adds) > 1 and not args.force):
            guess = await estimate(session, plan.adds)
            if args.dry_run:
                _print_estimate(invocation, plan.adds, guess)
                return 0
            if guess.flushes_half:
                console.note(
                    f"contextls: adding {plural(len(plan.adds), 'file')} "
                    f"(~{tokens(guess.added_tokens)}) would evict "
                    f"{len(guess.evicted)} of the window's {plural(guess.window_items, 'item')} "
                    f"({tokens(guess.evicted_tokens)}), more than half of it; nothing was added. "
                    "`--dry-run` lists them, `--force` adds anyway"
                )
                return 1
        progress = ProgressBar.for_stream(len(plan.adds), console.stderr)
        refused_origins: set[str] = set()
        for done, planned in enumerate(plan.adds):
            if planned.origin in refused_origins:
                continue
            shown = invocation.display_path(planned.path)
            progress.update(done, shown)
            try:
                result = await _send(session, planned, language=args.language, pin=args.pin)
            except ContextlsError as error:
                if planned.expanded and error.code in SKIPPED_WHEN_EXPANDING:
                    report.skipped.append(
                        Skip(path=shown, reason=SKIPPED_WHEN_EXPANDING[error.code])
                    )
                    continue
                if planned.expanded:
                    # Outside the workspace, say: every other file of this
                    # directory or glob would be refused the same way.
                    refused_origins.add(planned.origin)
                target = planned.origin if planned.expanded else _describe(shown, planned)
                report.refused.append(
                    Refusal(target=target, code=error.code, message=error.message)
                )
                if not progress.enabled:
                    console.note(f"contextls: {error.message}")
                continue
            report.added.append(result)
            report.status = result.status
            console.note(*(f"contextls: warning: {warning}" for warning in result.warnings))
            if itemised:
                console.out(_added_line(result, pin_asked=args.pin))
            # Many files: evictions are gathered and summarised at the end.
            session.evicted(result.evicted, defer=not itemised)
        progress.update(len(plan.adds), "")
        progress.close()
        if progress.enabled:
            console.note(*(f"contextls: {refusal.message}" for refusal in report.refused))
        if report.added and not itemised:
            total = sum(result.item.tokens for result in report.added)
            console.out(f"added {plural(len(report.added), 'item')} ({tokens(total)})")
    _summarise(invocation, report)
    return 1 if report.refused else 0


async def _send(
    session: Session, planned: PlannedAdd, language: str | None, pin: bool
) -> AddResult:
    uri = planned.path.resolve().as_uri()
    if planned.lines is None:
        return await session.client.call(
            Requests.ADD_FILE,
            AddFileParams(workspace=session.workspace, uri=uri, language=language, pin=pin),
        )
    return await session.client.call(
        Requests.ADD_REGION,
        AddRegionParams(
            workspace=session.workspace,
            uri=uri,
            range=planned.lines.to_range(),
            language=language,
            pin=pin,
        ),
    )


def _print_estimate(invocation: Invocation, adds: list[PlannedAdd], guess: Estimate) -> None:
    console = invocation.console
    console.json(
        {
            "add": [invocation.display_path(planned.path) for planned in adds],
            "addedTokens": guess.added_tokens,
            "evict": [item.id for item in guess.evicted],
            "exact": guess.exact,
        }
    )
    about = "" if guess.exact else " (an estimate: the relevance policy may choose others)"
    console.out(
        f"would add {plural(len(adds), 'file')} (~{tokens(guess.added_tokens)})",
        *(f"  {_describe(invocation.display_path(p.path), p)}" for p in adds),
    )
    if guess.evicted:
        console.out(
            f"would evict {plural(len(guess.evicted), 'item')}{about}:",
            *(f"  {item_line(item)}" for item in guess.evicted),
        )
    else:
        console.out("would evict nothing")


def _describe(shown: str, planned: PlannedAdd) -> str:
    return shown if planned.lines is None else f"{shown}:{planned.lines}"


def _added_line(result: AddResult, pin_asked: bool = False) -> str:
    line = f"added {item_line(result.item)}"
    if result.item.pinned:
        line += ", pinned"
    if result.merged:
        line += f"; merged {', '.join(result.merged)} into it"
        if result.item.pinned and not pin_asked:
            # Never silent: a pinned region that grew (into a whole file, say) keeps its pin.
            line += " (pinned, as what it absorbed was)"
    elif result.deduplicated:
        line += "; it was already there, now it is the newest"
    return line


def _summarise(invocation: Invocation, report: AddReport) -> None:
    console = invocation.console
    if report.skipped:
        reasons: dict[str, int] = {}
        for skip in report.skipped:
            reasons[skip.reason] = reasons.get(skip.reason, 0) + 1
        detail = ", ".join(f"{number} {reason}" for reason, number in reasons.items())
        console.note(f"skipped {plural(len(report.skipped), 'file')} while expanding: {detail}")
        secret = [skip for skip in report.skipped if skip.reason.startswith("may hold secrets")]
        named = report.skipped if len(report.skipped) <= SKIPS_NAMED else secret
        console.note(*(f"  {skip.path} ({skip.reason})" for skip in named))
    if report.status is not None:
        console.out(window_line(report.status))
    console.json(report)
