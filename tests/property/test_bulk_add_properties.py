"""A bulk add is planned as a whole, under random windows, pins, policies and file sets.

For every generated case: the dry run and the real add agree exactly (same items,
same evictions, or the same refusal); the set never evicts its own members; a set
that cannot fit beside the pinned items changes nothing; one that would evict more
than half of the window changes nothing without ``force``; pinned items are never
evicted; and the window's limits hold afterwards.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from contextls.app import bulk
from contextls.app.session import Session
from contextls.core.errors import ContextError
from contextls.protocol import AddFilesParams, AddFilesResult, ErrorCode, FileTarget

from ..unit.test_service import Editor, start

WORD = st.sampled_from(["alpha", "beta", "gamma", "delta", "omega", "x = 1", "def f():"])


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "policy": draw(st.sampled_from(["fifo", "relevance"])),
        "max_tokens": draw(st.integers(min_value=100, max_value=800)),
        "max_items": draw(st.integers(min_value=3, max_value=20)),
        "notes": draw(st.lists(st.tuples(st.integers(1, 40), st.booleans()), max_size=10)),
        "files": draw(st.lists(st.integers(0, 60), min_size=1, max_size=6)),
        "pin": draw(st.booleans()),
        "regions_first": draw(st.booleans()),
    }


def fresh(root: Path, case: dict[str, Any]) -> Session:
    session = start(
        root,
        ":memory:",
        Editor(),
        maxTokens=case["max_tokens"],
        maxItems=case["max_items"],
        evictionPolicy=case["policy"],
    )
    workspace = session.route()
    for n, (size, pinned) in enumerate(case["notes"]):
        with contextlib.suppress(ContextError):  # no room beside the pins: nothing changes
            workspace.adding.add_text("text", f"note {n} " + "word " * size, pin=pinned)
    if case["regions_first"] and case["files"]:
        with contextlib.suppress(ContextError):
            workspace.adding.add_region(
                (root / "src" / "f0.txt").as_uri(), (0, 0), (1, 0), pin=True
            )
    workspace.unit_of_work.commit()
    return session


def outcome(session: Session, params: AddFilesParams) -> Any:
    try:
        result = bulk.add_files(session.route(), params)
    except ContextError as error:
        if isinstance(error.data, AddFilesResult):  # NEEDS_FORCE: the plan
            return ("refused", int(error.code), described(error.data))
        return ("refused", int(error.code), msgspec.to_builtins(error.data))
    return described(result)


def described(result: AddFilesResult) -> tuple[Any, ...]:
    """What a result says, without the clock (two sessions add at other moments)."""
    return (
        [(item.id, item.label, item.tokens, item.pinned) for item in result.items],
        [item.id for item in result.evicted],
        sorted(result.merged.items()),
    )


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=cases(), force=st.booleans())
@example(  # evicts the window's only note: needs force
    case={
        "policy": "fifo",
        "max_tokens": 60,
        "max_items": 2,
        "notes": [(1, False)],
        "files": [0, 0],
        "pin": False,
        "regions_first": False,
    },
    force=False,
)
@example(  # a pinned region of f0 becomes the pinned whole file, beside a relevance window
    case={
        "policy": "relevance",
        "max_tokens": 400,
        "max_items": 6,
        "notes": [(5, False), (5, True), (5, False), (5, False)],
        "files": [30, 10],
        "pin": False,
        "regions_first": True,
    },
    force=True,
)
def test_a_bulk_add_is_planned_as_a_whole(case: dict[str, Any], force: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "src").mkdir()
        for n, size in enumerate(case["files"]):
            body = "".join(f"line {k} " + "token " * (size // 10 + 1) + "\n" for k in range(3))
            (root / "src" / f"f{n}.txt").write_text(body)
        params = AddFilesParams(
            targets=[FileTarget(uri=(root / "src").as_uri())], pin=case["pin"], force=force
        )
        planning = fresh(root, case)
        before = {item.id: item for item in planning.route().window}
        planned = outcome(planning, msgspec.structs.replace(params, dry_run=True))
        assert {item.id for item in planning.route().window} == set(before)  # nothing changed

        adding = fresh(root, case)
        done = outcome(adding, params)
        assert planned == done
        window = adding.route().window
        assert len(window) <= case["max_items"]
        assert window.tokens <= case["max_tokens"]
        event(f"refused {ErrorCode(done[1]).name}" if done[0] == "refused" else "added")
        if done[0] == "refused":
            assert done[1] in (ErrorCode.NO_ROOM, ErrorCode.NEEDS_FORCE)
            assert done[1] != ErrorCode.NEEDS_FORCE or not force
            assert {item.id for item in window} == set(before)
            return
        members, evicted, _ = done
        event("evicted others" if evicted else "evicted nothing")
        assert all(member_id in window for member_id, *_ in members)  # never its own
        assert not set(evicted) & {member_id for member_id, *_ in members}
        assert not any(before[item_id].pinned for item_id in evicted if item_id in before)
        if not force and before:
            assert len(evicted) * 2 <= len(before)
