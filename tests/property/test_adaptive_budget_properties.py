"""The adaptive budget under random work (a hypothesis state machine on a real workspace).

Adds of every kind, removals, pins and unpins, changes of policy, task and ceiling.
After every step: the window's tokens are within the effective budget; the budget is
within [max(base/2, pinned), min(4 × base, ceiling)] under ``adaptive`` and is the base
under ``fixed``; no step moved it by more than a quarter of the base (unless the base or
policy was set anew); pinned items were never evicted (an item unpinned in the step is
no longer pinned); evictions for the budget are announced with the reason ``budget``
only under ``adaptive``.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from contextls.app.session import Session
from contextls.core.errors import ContextError
from contextls.protocol import TASKS

from ..unit.test_service import Editor, start

BASE = 1200
TEXTS = st.sampled_from(
    [
        ("error", "Traceback (most recent call last):\nValueError: failed\n" + "frame\n" * 200),
        ("code", "def implementation(api):\n    return database.query(api)\n" * 30),
        ("text", "why does the algorithm fail? " * 40),
        ("text", "a plain note"),
        ("repl-history", ">>> 1 + 1\n2\n"),
        ("custom", "x" * 700),
    ]
)

TEXTS_BY_KIND = {
    "error": "Traceback (most recent call last):\nValueError: failed\n" + "frame\n" * 200,
    "code": "def implementation(api):\n    return database.query(api)\n" * 30,
}


class AdaptiveWindow(RuleBasedStateMachine):
    @initialize()
    def open(self) -> None:
        self.folder = tempfile.TemporaryDirectory()
        self.editor = Editor()
        self.session: Session = start(
            Path(self.folder.name), ":memory:", self.editor, maxTokens=BASE, maxItems=30
        )
        self.workspace = self.session.route()
        self.serial = 0
        self.last_budget = BASE
        self.reset = False

    def teardown(self) -> None:
        self.folder.cleanup()

    def _do(self, action: Any) -> None:
        pinned_before = {item.id for item in self.workspace.window if item.pinned}
        before = self.workspace.status().budget
        with contextlib.suppress(ContextError):  # a refusal changes nothing
            action()
        self.workspace.unit_of_work.commit()
        gone = pinned_before - {item.id for item in self.workspace.window}
        assert not gone - self.removed, f"pinned items evicted: {gone}"
        self.last_budget, self.step_from = self.workspace.status().budget, before

    @rule(text=TEXTS, pin=st.booleans())
    def add(self, text: tuple[str, str], pin: bool) -> None:
        kind, content = text
        self.serial += 1
        self.removed: set[str] = set()
        self.reset = False
        self._do(lambda: self.workspace.adding.add_text(kind, f"{content} #{self.serial}", pin=pin))  # type: ignore[arg-type]

    @rule(index=st.integers(0, 40))
    def remove(self, index: int) -> None:
        ids = [item.id for item in self.workspace.window]
        self.removed = {ids[index % len(ids)]} if ids else set()
        self.reset = False
        self._do(lambda: self.workspace.changes.remove(list(self.removed)) if ids else None)

    @rule(index=st.integers(0, 40), pinned=st.booleans())
    def pin(self, index: int, pinned: bool) -> None:
        ids = [item.id for item in self.workspace.window]
        # An unpinned item is evictable again: if the pinned items held the budget up,
        # the step after the unpin may evict it.
        self.removed = {ids[index % len(ids)]} if ids and not pinned else set()
        self.reset = False
        self._do(lambda: self.workspace.changes.pin(ids[index % len(ids)], pinned) if ids else None)

    @rule(
        policy=st.sampled_from(["fixed", "adaptive"]),
        task=st.sampled_from(TASKS),
        ceiling=st.sampled_from([0, 0, 2000, 3500, 100_000]),
    )
    def configure(self, policy: str, task: str, ceiling: int) -> None:
        self.removed = set()
        before = self.workspace.settings.budget_policy
        self.reset = policy != before  # a policy set anew starts from the base
        self._do(
            lambda: self.workspace.config.configure(
                {"budgetPolicy": policy, "task": task, "budgetCeiling": ceiling}
            )
        )

    @invariant()
    def within_the_budget(self) -> None:
        if not hasattr(self, "workspace"):
            return
        status = self.workspace.status()
        window = self.workspace.window
        assert status.tokens <= status.budget
        assert status.max_tokens == BASE
        settings_ = self.workspace.settings
        if settings_.budget_policy == "fixed":
            assert status.budget == BASE
            return
        ceiling = settings_.budget_ceiling or 4 * BASE
        low = max(BASE // 2, window.pinned_tokens)
        high = max(min(4 * BASE, ceiling), low)
        assert low <= status.budget <= high, (low, status.budget, high)
        event("budget above the base" if status.budget > BASE else "budget at or below the base")
        if not self.reset and hasattr(self, "step_from"):
            moved = abs(status.budget - self.step_from)
            # A lower ceiling cuts the budget at once, and the newest item is always in: the
            # budget grows at once to hold it beside the pinned items, then takes its step.
            # Every other step is a small one.
            newest = window.recent(1)
            room_for_newest = (
                window.pinned_tokens
                + (newest[-1].tokens if newest and not newest[-1].pinned else 0)
                + window.costs.frame
            )
            grown_from = max(self.step_from, room_for_newest)
            small_step = moved <= BASE // 4 or abs(status.budget - grown_from) <= BASE // 4
            assert small_step or status.budget == high, (
                self.step_from,
                status.budget,
                room_for_newest,
            )

    @invariant()
    def budget_evictions_only_when_adaptive(self) -> None:
        if not hasattr(self, "editor"):
            return
        for _, _, reason in self.editor.evictions:
            assert reason in ("maxItems", "maxTokens", "budget")
            if reason == "budget":
                event("evicted for the budget")


TestAdaptiveWindow = AdaptiveWindow.TestCase
TestAdaptiveWindow.settings = settings(
    max_examples=100,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def test_the_budget_grows_at_once_for_the_newest_item_beside_pinned_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found by the machine: eleven notes, three pinned items (~1,500 tokens), the adaptive
    policy, then one more note of ~400 tokens: the budget grows from 1,500 to hold it."""
    monkeypatch.setattr(sys.modules[__name__], "event", lambda *args: None)  # outside a run
    machine = AdaptiveWindow()
    machine.open()
    try:
        error, code = TEXTS_BY_KIND["error"], TEXTS_BY_KIND["code"]
        for _ in range(11):
            machine.add(("error", error), pin=False)
        machine.add(("error", error), pin=True)
        machine.add(("error", error), pin=True)
        machine.add(("code", code), pin=True)
        machine.configure("adaptive", "general", 0)
        machine.within_the_budget()
        machine.add(("error", error), pin=False)
        machine.within_the_budget()
        assert machine.workspace.status().budget > machine.step_from + BASE // 4  # grown
    finally:
        machine.teardown()
