"""Changes made elsewhere reach the agent, once each, at both eras, across daemon restarts."""

from __future__ import annotations

import asyncio
import os
import re
import signal
from collections import Counter
from typing import Any

import pytest
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated

from ..cli.conftest import Cli
from .conftest import agent, call

# Handshake-era hosts subscribe with resources/subscribe, which the SDK's client (written
# for 2026-07-28) warns about at every call.
pytestmark = pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")

CONTEXT = "contextls://context/project"
SETTLE_SECONDS = 1.5
"""Longer than the server gathers pushes, so a second notification would have come."""


class Notifications:
    """What a handshake-era host receives, by method and URI."""

    def __init__(self) -> None:
        self.seen: Counter[tuple[str, str | None]] = Counter()

    async def __call__(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str) and method.startswith("notifications/resources/"):
            params = getattr(message, "params", None)
            self.seen[(method, getattr(params, "uri", None))] += 1

    async def after(self, action: Any) -> Counter[tuple[str, str | None]]:
        await asyncio.sleep(SETTLE_SECONDS)  # what the agent's own calls changed is told first
        self.seen.clear()
        await asyncio.to_thread(action)
        await asyncio.sleep(SETTLE_SECONDS)
        return Counter(self.seen)


ONE_CHANGE = Counter(
    {
        ("notifications/resources/updated", CONTEXT): 1,
        ("notifications/resources/list_changed", None): 1,
    }
)


async def test_a_handshake_session_subscribes_and_hears_each_change_once(project: Cli) -> None:
    heard = Notifications()
    async with agent(project, "legacy", message_handler=heard) as client:
        resources = client.server_capabilities.resources
        assert resources is not None and resources.subscribe and resources.list_changed
        listed = [str(r.uri) for r in (await client.list_resources()).resources]
        assert listed == [CONTEXT]
        await client.subscribe_resource(CONTEXT)
        seen = await heard.after(lambda: project("add-text", "from the shell"))
        assert seen == ONE_CHANGE, dict(seen)
        assert "from the shell" in (await client.read_resource(CONTEXT)).contents[0].text  # type: ignore[union-attr]
        await client.subscribe_resource("contextls://item/ctx-1")
        pinned = await heard.after(lambda: project("pin", "ctx-1"))
        assert pinned == ONE_CHANGE + Counter(
            {("notifications/resources/updated", "contextls://item/ctx-1"): 1}
        )
        await client.unsubscribe_resource(CONTEXT)
        await client.unsubscribe_resource("contextls://item/ctx-1")
        assert await heard.after(lambda: project("add-text", "another")) == Counter(
            {("notifications/resources/list_changed", None): 1}
        )


async def test_a_2026_session_hears_each_change_once_on_its_stream(project: Cli) -> None:
    async with agent(project, "auto") as client:
        assert client.protocol_version == "2026-07-28"
        events: list[object] = []
        async with client.listen(
            resources_list_changed=True, resource_subscriptions=[CONTEXT]
        ) as stream:

            async def gather() -> None:
                async for event in stream:
                    events.append(event)

            task = asyncio.create_task(gather())
            await asyncio.to_thread(project, "add-text", "from the shell")
            await asyncio.sleep(SETTLE_SECONDS)
            task.cancel()
        assert Counter(map(repr, events)) == Counter(
            [repr(ResourceUpdated(uri=CONTEXT)), repr(ResourcesListChanged())]
        ), events


def daemon_pid(status: str) -> int:
    found = re.search(r"daemon pid (\d+)", status)
    assert found, status
    return int(found.group(1))


@pytest.mark.parametrize("stop", ["SIGKILL", "daemon stop"])
async def test_the_daemon_goes_away_and_the_session_goes_on(project: Cli, stop: str) -> None:
    heard = Notifications()
    async with agent(project, "legacy", message_handler=heard) as client:
        await client.subscribe_resource(CONTEXT)
        await call(client, "add_text", content="before the restart")
        first = daemon_pid(await call(client, "status"))
        if stop == "SIGKILL":
            os.kill(first, signal.SIGKILL)
        else:
            project("daemon", "stop")
        await asyncio.sleep(0.5)
        # The next call reaches (starts) a daemon again and is answered.
        context = await call(client, "get_context")
        assert "before the restart" in context
        second = daemon_pid(await call(client, "status"))
        assert second != first
        # The subscription goes on with the new daemon.
        seen = await heard.after(lambda: project("add-text", "after"))
        assert seen == ONE_CHANGE, dict(seen)


async def test_changes_reach_the_agent_once_another_client_starts_the_daemon(
    project: Cli,
) -> None:
    heard = Notifications()
    async with agent(project, "legacy", message_handler=heard) as client:
        await client.subscribe_resource(CONTEXT)
        await call(client, "add_text", content="one")
        project("daemon", "stop")
        await asyncio.sleep(0.5)
        # No call from the agent: the CLI starts the daemon, and the session finds it.
        changed = await heard.after(lambda: project("add-text", "from the shell"))
        await asyncio.sleep(1.5)  # it looks for the daemon once a second
        changed += heard.seen
        assert changed[("notifications/resources/updated", CONTEXT)] >= 1, changed
        listed = await call(client, "list")
        assert "from the shell" in listed
