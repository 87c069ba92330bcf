"""The adaptive budget over LSP: a debugging session grows it, notes shrink it (with the
evictions announced), and under the fixed policy nothing moves."""

from __future__ import annotations

import itertools
from typing import Any

from contextls.core.adaptive import complexity, next_budget
from contextls.core.items import Item

from .conftest import Session, Starter

BASE = 2000
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "app/models.py", line 88, in save\n'
    "    self.db.commit()\n"
    "sqlite3.OperationalError: database is locked\n"
)


def region(session: Session, n: int) -> dict[str, Any]:
    return session.region("src/app.py", 3 * n + 1, 3 * n + 2)


async def status(session: Session) -> dict[str, Any]:
    result: dict[str, Any] = await session.call("contextls/status")
    return result


def expected(window: list[dict[str, Any]], current: int, task: str) -> tuple[float, int]:
    """The seed's formula, from what the window holds (written out, not the server's)."""
    items = [
        Item(id=i["id"], kind=i["kind"], content=i["content"], metadata={}, timestamp=0, tokens=1)
        for i in window
    ]
    score = complexity(items)
    return score, next_budget(current, BASE, task, score, 0, 0)


async def test_a_debugging_session_grows_the_budget_and_notes_shrink_it(start: Starter) -> None:
    session = await start(
        {"maxTokens": BASE, "budgetPolicy": "adaptive", "task": "debugging", "maxItems": 200}
    )
    before = await status(session)
    assert before["budget"] == BASE and before["budgetPolicy"] == "adaptive"
    budgets = [BASE]
    for n in range(6):
        await session.call("contextls/addText", kind="error", content=f"{TRACEBACK}#{n}\n")
        await session.call("contextls/addRegion", **region(session, n))
        now = await status(session)
        window = (await session.call("contextls/list"))["items"]
        score, _ = expected(window, budgets[-1], "debugging")
        assert abs(now["complexity"] - score) < 1e-3
        assert 0 < now["budget"] - budgets[-1] <= BASE // 4 * 2  # two changes, a step each
        budgets.append(now["budget"])
    assert budgets[-1] > BASE * 2
    assert now["tokens"] <= now["budget"]
    # Fill the window close to what the budget allows, then take plain notes.
    for n in range(40):
        if (await status(session))["tokens"] >= budgets[-1] - 600:
            break
        await session.call("contextls/addText", kind="code", content=f"x = {n}\n" * 60)
    session.evictions.clear()
    shrinking = [(await status(session))["budget"]]
    answered: set[str] = set()
    for n in range(25):
        added = await session.call("contextls/addText", content=f"plain note {n}")
        answered.update(item["id"] for item in added["evicted"])
        shrinking.append((await status(session))["budget"])
    assert shrinking[-1] < shrinking[0]
    assert all(a - b <= BASE // 4 for a, b in itertools.pairwise(shrinking))
    reasons = {notice["reason"] for notice in session.evictions}
    assert "budget" in reasons, reasons
    # What the shrinking budget evicted is in the answers of the adds that shrank it.
    announced = {item["id"] for notice in session.evictions for item in notice["items"]}
    assert announced <= answered, announced - answered
    final = await status(session)
    assert final["tokens"] <= final["budget"] and final["complexity"] == 0


async def test_under_the_fixed_policy_nothing_moves(start: Starter) -> None:
    session = await start({"maxTokens": BASE, "task": "debugging"})
    for n in range(6):
        await session.call("contextls/addText", kind="error", content=f"{TRACEBACK}#{n}\n")
        now = await status(session)
        assert now["budget"] == BASE and now["budgetPolicy"] == "fixed"
    assert now["complexity"] > 0  # said, but it moves nothing


async def test_setting_max_tokens_resets_the_base_at_once(start: Starter) -> None:
    session = await start({"maxTokens": BASE, "budgetPolicy": "adaptive", "task": "debugging"})
    for n in range(4):
        await session.call("contextls/addText", kind="error", content=f"{TRACEBACK}#{n}\n")
    assert (await status(session))["budget"] > BASE
    result = await session.call("contextls/configure", settings={"maxTokens": 3000})
    assert result["status"]["budget"] == 3000 and result["status"]["maxTokens"] == 3000
