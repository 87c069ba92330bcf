"""A bulk add: many files as one change, planned as a whole.

The set is added to the window first without evicting anything; then it must fit
beside the pinned items outside it (else NO_ROOM with the figures, and nothing
changes); then the window makes room, never evicting a member of the set. When
that would evict more than half of what the window held (its items or its
tokens), it is refused unless forced (NEEDS_FORCE, whose data is the planned
result). A dry run is the same change, answered and rolled back: what it says
is exactly what the real add does to the window as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

import msgspec

from contextls.app import protocol_views as wire
from contextls.app.changes import Change
from contextls.app.expand import PlannedFile, expand
from contextls.app.workspace import Workspace
from contextls.core import adaptive
from contextls.core.candidates import Candidate
from contextls.core.errors import ContextError, ItemTooLarge, NeedsForce, NoRoom, thousands
from contextls.core.items import Item
from contextls.core.room import evicts_most
from contextls.core.secrets import words_of
from contextls.core.window import AddOutcome, Window
from contextls.protocol import (
    AddFilesParams,
    AddFilesResult,
    ErrorCode,
    FileTarget,
    FileTokens,
    NoRoomData,
    PinnedGrowth,
    SkippedFile,
    TargetRefusal,
)

SKIPPED_WHEN_EXPANDING: Final[dict[int, str]] = {
    ErrorCode.BINARY_FILE: "binary",
    ErrorCode.FILE_TOO_LARGE: "larger than maxFileBytes",
    ErrorCode.ITEM_TOO_LARGE: "over the token budget on its own",
    ErrorCode.FILE_NOT_FOUND: "gone, or not a regular file",
    ErrorCode.OUTSIDE_WORKSPACE: "a link to outside the workspace",
}
"""Refusals that, for a file a folder or glob held, mean "leave it out", said so."""


class _Planned(Exception):
    """Carries a plan out of the change, which is then rolled back: a dry run's answer,
    or an add that needs ``force``."""

    def __init__(self, result: AddFilesResult, needs_force: str | None) -> None:
        super().__init__("planned")
        self.result = result
        self.needs_force = needs_force


@dataclass(slots=True)
class _Plan:
    candidates: list[tuple[PlannedFile, Candidate]] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    refused: list[TargetRefusal] = field(default_factory=list)
    counted: dict[str, int] = field(default_factory=dict)
    """Each file's body as the window counts it -> its tokens (``read_plan``)."""
    scanned: dict[str, list[str]] = field(default_factory=dict)
    """Each file's text -> the kinds of secret it seems to hold (``read_plan``)."""

    def leave_out(self, planned: PlannedFile, rel: str, error: ContextError) -> None:
        if not planned.named and error.code in SKIPPED_WHEN_EXPANDING:
            self.skipped.append(SkippedFile(path=rel, reason=SKIPPED_WHEN_EXPANDING[error.code]))
        else:
            target = planned.origin if planned.named else rel
            self.refused.append(
                TargetRefusal(target=target, code=int(error.code), message=error.message)
            )


def read_plan(
    workspace: Workspace,
    params: AddFilesParams,
    progress: Callable[[int, int], None] | None = None,
) -> _Plan:
    """Expand, read (outline) and count every file of the add: the long part, which a
    handler runs in a worker thread while other requests are answered (it changes
    nothing; the tokenizer remembers the counts, so the add that follows counts nothing).
    ``progress``: told (files read, files to read) as it goes."""
    plan = _read(workspace, params, progress)
    for _, candidate in plan.candidates:
        body, tokens, secrets = workspace.adding.precount(candidate)
        plan.counted[body] = tokens
        plan.scanned[candidate.content] = secrets
    return plan


def add_files(
    workspace: Workspace, params: AddFilesParams, plan: _Plan | None = None
) -> AddFilesResult:
    """The add of ``plan`` (read now when not given: ``read_plan``), as one change."""
    if plan is None:
        plan = _read(workspace, params)  # outside the write lock
    if not plan.candidates:
        return AddFilesResult(
            items=[],
            evicted=[],
            tokens=0,
            status=workspace.status(),
            skipped=plan.skipped,
            refused=plan.refused,
            dry_run=params.dry_run,
        )
    try:
        grow = adaptive.grow_to(workspace.settings)
        with workspace.tokenizer.consulting(plan.counted):
            result = workspace.change(
                lambda change: _apply(workspace.window, change, plan, params, grow)
            )
    except _Planned as planned:  # rolled back: the status is the window's as it is
        result = msgspec.structs.replace(planned.result, status=workspace.status(), dry_run=True)
        if planned.needs_force is not None:
            raise NeedsForce(planned.needs_force, data=result) from None
        return result
    secrets = [
        found
        for item in result.items
        for found in workspace.note_secrets(
            item.id, item.label, item.content, plan.scanned.get(item.content)
        )
    ]
    return msgspec.structs.replace(
        result,
        status=workspace.status(),
        warnings=[words_of(found) for found in secrets],
        secrets=secrets,
    )


def count_files(
    workspace: Workspace, targets: list[FileTarget], count: Callable[[str], int]
) -> tuple[list[FileTokens], list[SkippedFile], list[TargetRefusal]]:
    """What each file of ``targets`` takes, expanded and read as a bulk add would."""
    plan = _read(workspace, AddFilesParams(targets=targets))
    files = [
        FileTokens(path=str(candidate.metadata.get("path", "")), tokens=count(candidate.content))
        for _, candidate in plan.candidates
    ]
    return files, plan.skipped, plan.refused


def _read(
    workspace: Workspace,
    params: AddFilesParams,
    progress: Callable[[int, int], None] | None = None,
) -> _Plan:
    root = workspace.sources.root
    expansion = expand(params.targets, root)
    plan = _Plan(
        skipped=[SkippedFile(path=path, reason=why) for path, why in expansion.skipped],
        refused=list(expansion.refused),
    )
    total = len(expansion.files)
    for done, planned in enumerate(expansion.files, 1):
        try:
            plan.candidates.append((planned, _candidate(workspace, planned, params)))
        except ContextError as error:
            plan.leave_out(planned, _relative(planned, root), error)
        if progress is not None:
            progress(done, total)
    return plan


def _candidate(workspace: Workspace, planned: PlannedFile, params: AddFilesParams) -> Candidate:
    uri = planned.path.as_uri()
    if planned.range is None:
        whole = workspace.adding.file_candidate(uri, params.language, params.metadata, params.pin)
        return workspace.views.outlined_candidate(whole, or_whole=True) if params.outline else whole
    start, end = planned.range.start, planned.range.end
    return workspace.adding.region_candidate(
        uri,
        (start.line, start.character),
        (end.line, end.character),
        language=params.language,
        metadata=params.metadata,
        pin=params.pin,
    )


def _apply(
    window: Window, change: Change, plan: _Plan, params: AddFilesParams, grow_to: int
) -> AddFilesResult:
    held_items, held_tokens = len(window), window.tokens
    members: dict[str, None] = {}
    """The set's items, in the order added (an item refreshed again moves to the end)."""
    created: set[str] = set()
    outcomes: list[tuple[Candidate, AddOutcome]] = []
    for planned, candidate in plan.candidates:
        try:
            outcome = window.add(candidate, bulk=True, grow_to=grow_to)
        except ItemTooLarge as error:  # refused before the window changed
            plan.leave_out(planned, str(candidate.metadata.get("path", planned.origin)), error)
            continue
        change.record(outcome)
        for absorbed in outcome.absorbed:
            members.pop(absorbed.id, None)
        members.pop(outcome.item.id, None)
        members[outcome.item.id] = None
        if outcome.created:
            created.add(outcome.item.id)
        outcomes.append((candidate, outcome))
    chosen = [window.get(item_id) for item_id in members]
    _grow_for(window, chosen, grow_to)
    _check_room(window, chosen, plan.skipped)
    evictions = window.evict_to_fit(protect=members)
    change.record_evictions(evictions)
    result = AddFilesResult(
        items=[wire.context_item(window.get(item_id)) for item_id in members],
        evicted=[wire.context_item(eviction.item) for eviction in evictions],
        tokens=sum(window.get(item_id).tokens for item_id in members),
        status=wire.EMPTY_STATUS,  # the caller gives the status once the change is done
        merged={
            item.id: outcome.item.id
            for _, outcome in outcomes
            for item in outcome.absorbed
            if item.id not in created and item.id != outcome.item.id
        },
        pinned_growth=_pinned_growth(outcomes),
        skipped=plan.skipped,
        refused=plan.refused,
        dry_run=params.dry_run,
    )
    # One file named explicitly slides the window like any add of one thing; asking first
    # is for what a person cannot foresee: a folder, a glob, several files.
    bulk = len(plan.candidates) > 1 or not plan.candidates[0][0].named
    gone = [eviction.item for eviction in evictions]
    if bulk and not params.force and evicts_most(gone, held_items, held_tokens):
        raise _Planned(result, _needs_force_message(result, held_items))
    if params.dry_run:
        raise _Planned(result, None)
    return result


def _grow_for(window: Window, members: list[Item], grow_to: int) -> None:
    """Under an adaptive budget, grow (up to ``grow_to``) so the set fits beside the
    pinned items outside it, as an add of one item does."""
    outside = window.pinned_tokens - sum(item.tokens for item in members if item.pinned)
    needed = outside + sum(item.tokens for item in members) + window.costs.frame
    budget = max(window.limits.max_tokens, min(needed, grow_to))
    if budget != window.limits.max_tokens:
        window.limits = replace(window.limits, max_tokens=budget)


def _check_room(window: Window, members: list[Item], skipped: list[SkippedFile]) -> None:
    """The set fits beside the pinned items outside it, or nothing changes (NO_ROOM)."""
    limits = window.limits
    pinned_members = [item for item in members if item.pinned]
    pinned_tokens = window.pinned_tokens - sum(item.tokens for item in pinned_members)
    pinned_count = window.pinned_count - len(pinned_members)
    tokens = sum(item.tokens for item in members)
    available_tokens = window.capacity - pinned_tokens
    available_items = limits.max_items - pinned_count
    short_tokens = max(0, tokens - available_tokens)
    short_items = max(0, len(members) - available_items)
    if not short_tokens and not short_items:
        return
    files = f"{len(members)} file{'s' if len(members) != 1 else ''}"
    beside = (
        f"beside the {thousands(pinned_tokens)} tokens of pinned items"
        if pinned_tokens
        else "with nothing pinned"
    )
    if short_tokens:
        message = (
            f"the {files} {'takes' if len(members) == 1 else 'take'} {thousands(tokens)} "
            f"tokens, but the budget of "
            f"{thousands(limits.max_tokens)} leaves {thousands(available_tokens)} {beside}: "
            f"{thousands(short_tokens)} too many; nothing was added (add fewer files, "
            "unpin something or raise maxTokens)"
        )
    else:
        message = (
            f"the {files} need {len(members)} places, but maxItems {limits.max_items} leaves "
            f"{available_items} beside the {pinned_count} pinned items; nothing was added "
            "(add fewer files, unpin something or raise maxItems)"
        )
    if skipped:
        named = "; ".join(f"{skip.path}, {skip.reason}" for skip in skipped[:3])
        more = f"; and {len(skipped) - 3} more" if len(skipped) > 3 else ""
        message += f". Left out besides: {named}{more}"
    raise NoRoom(
        message,
        data=NoRoomData(
            tokens=tokens,
            items=len(members),
            available_tokens=available_tokens,
            available_items=available_items,
            short_tokens=short_tokens,
            short_items=short_items,
            skipped=skipped,
        ),
    )


def _needs_force_message(result: AddFilesResult, held_items: int) -> str:
    gone = result.evicted
    tokens = sum(item.tokens for item in gone)
    return (
        f"adding {len(result.items)} file{'s' if len(result.items) != 1 else ''} "
        f"({thousands(result.tokens)} tokens) would evict {len(gone)} of the window's "
        f"{held_items} items ({thousands(tokens)} tokens), more than half of it; nothing "
        "was added (add it anyway with force)"
    )


def _pinned_growth(outcomes: list[tuple[Candidate, AddOutcome]]) -> list[PinnedGrowth]:
    grown: list[PinnedGrowth] = []
    for candidate, outcome in outcomes:
        pinned = [item for item in outcome.absorbed if item.pinned]
        if pinned and not candidate.pin:
            grown.append(
                PinnedGrowth(
                    id=outcome.item.id,
                    label=outcome.item.label,
                    absorbed=[item.id for item in pinned],
                    tokens_before=sum(item.tokens for item in pinned),
                    tokens_after=outcome.item.tokens,
                )
            )
    return grown


def _relative(planned: PlannedFile, root: Path) -> str:
    try:
        return planned.path.relative_to(root).as_posix()
    except ValueError:
        return str(planned.path)
