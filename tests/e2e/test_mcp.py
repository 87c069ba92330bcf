"""contextls mcp, end to end with the MCP SDK's own client over stdio.

The MCP server is a client of the shared daemon: what an agent adds is in
the window the CLI sees, and a change the CLI makes reaches the agent as a
resource update.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "mcp", reason="the MCP SDK is the extra contextls[mcp] (make setup installs it)"
)

from mcp import Client, StdioServerParameters
from mcp.shared.subscriptions import ResourceUpdated

from ..cli.conftest import find_executable


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    values = {
        **os.environ,
        "CONTEXTLS_STORAGE": str(tmp_path / "db.sqlite3"),
        "CONTEXTLS_CONFIG_DIR": str(tmp_path / "cfg"),
    }
    yield values
    subprocess.run([find_executable(), "daemon", "stop"], env=values, capture_output=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "app.py").write_text("".join(f"def f{n}():\n    return {n}\n\n" for n in range(20)))
    (root / ".env").write_text("OPENAI_API_KEY=sk-proj-" + "Ab3" * 15 + "\n")
    return root


@contextlib.asynccontextmanager
async def connected(env: dict[str, str], project: Path) -> AsyncIterator[Client]:
    """An agent's client, started and stopped in the test's own task (anyio's cancel
    scopes must be left in the task that entered them: not an async fixture)."""
    params = StdioServerParameters(command=find_executable(), args=["mcp"], env=env, cwd=project)
    async with Client(params, read_timeout_seconds=30) as client:
        yield client


def cli(env: dict[str, str], project: Path, *args: str) -> str:
    done = subprocess.run(
        [find_executable(), *args], env=env, cwd=project, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def call(agent: Client, tool: str, **arguments: Any) -> str:
    result = await agent.call_tool(tool, arguments)
    assert not result.is_error, result.content
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


async def refused(agent: Client, tool: str, **arguments: Any) -> str:
    result = await agent.call_tool(tool, arguments)
    assert result.is_error, result.content
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


async def test_tools_and_resources_are_listed(env: dict[str, str], project: Path) -> None:
    async with connected(env, project) as agent:
        tools = {tool.name: tool for tool in (await agent.list_tools()).tools}
        assert set(tools) == {
            "get_context", "add_file", "add_region", "add_text", "search_archive",
            "restore", "pin", "remove", "status",
        }  # fmt: skip
        kinds = tools["add_text"].input_schema["properties"]["kind"]
        assert "error" in str(kinds) and "repl-history" in str(kinds)  # from protocol.ItemKind
        assert "when a file matters" in (tools["add_file"].description or "")
        resources = [str(r.uri) for r in (await agent.list_resources()).resources]
        assert resources == ["contextls://context/project"]
        templates = [
            t.uri_template for t in (await agent.list_resource_templates()).resource_templates
        ]
        assert templates == ["contextls://item/{item_id}"]


async def test_an_agent_adds_a_file_and_reads_it_back_as_the_cli_sees_it(
    env: dict[str, str], project: Path
) -> None:
    async with connected(env, project) as agent:
        added = await call(agent, "add_region", path="app.py", start_line=4, end_line=5)
        assert added.startswith("added ctx-1 (app.py:4-5")
        context = await call(agent, "get_context")
        assert "### Code (from app.py:4-5)" in context and "def f1():" in context
        assert "app.py:4-5" in cli(env, project, "ls")  # the same window
        listed = {str(r.uri): r for r in (await agent.list_resources()).resources}
        assert set(listed) == {"contextls://context/project", "contextls://item/ctx-1"}
        assert listed["contextls://item/ctx-1"].title == "app.py:4-5"
        item = await agent.read_resource("contextls://item/ctx-1")
        assert item.contents[0].text == "def f1():\n    return 1\n"  # type: ignore[union-attr]
        status = await agent.call_tool("status", {})
        assert status.structured_content is not None and status.structured_content["items"] == 1


async def test_search_and_restore(env: dict[str, str], project: Path) -> None:
    async with connected(env, project) as agent:
        cli(env, project, "config", "set", "maxItems", "1")
        await call(agent, "add_text", content="the retry loop backs off exponentially", kind="text")
        await call(agent, "add_text", content="an unrelated note")
        hits = await agent.call_tool("search_archive", {"query": "retry backs"})
        found = hits.structured_content
        assert found is not None and [hit["id"] for hit in found["hits"]] == ["ctx-1"]
        assert "keyword" in found["hits"][0]["found_by"]
        # In other words, by meaning only: still the note about retrying.
        meaning = await agent.call_tool(
            "search_archive", {"query": "how do failed attempts wait longer", "mode": "semantic"}
        )
        found = meaning.structured_content
        assert found is not None and found["mode"] == "semantic", found
        assert [hit["id"] for hit in found["hits"]] == ["ctx-1"]
        assert found["hits"][0]["found_by"] == ["semantic"]
        context = await call(
            agent, "get_context", query="how do failed attempts wait longer", auto_retrieve=True
        )
        assert "Relevant history" in context and "backs off exponentially" in context
        restored = await call(agent, "restore", ids=["ctx-1"])
        assert "restored ctx-1" in restored and "evicted ctx-2" in restored


async def test_a_change_made_by_the_cli_reaches_the_agent(
    env: dict[str, str], project: Path
) -> None:
    async with connected(env, project) as agent:
        uri = "contextls://context/project"
        async with agent.listen(resource_subscriptions=[uri]) as updates:
            await asyncio.to_thread(cli, env, project, "add-text", "from the shell")
            event = await asyncio.wait_for(updates.__anext__(), timeout=10)
        assert event == ResourceUpdated(uri=uri)
        rendered = await agent.read_resource(uri)
        assert "from the shell" in rendered.contents[0].text  # type: ignore[union-attr]


async def test_refusals_are_tool_errors_with_the_reason(env: dict[str, str], project: Path) -> None:
    async with connected(env, project) as agent:
        outside = await refused(agent, "add_file", path="../elsewhere.py")
        assert "outside the workspace" in outside
        missing = await refused(agent, "add_file", path="missing.py")
        assert "missing.py" in missing
        unknown = await refused(agent, "pin", id="ctx-42")
        assert "ctx-42" in unknown and "not in the window" in unknown
        secret = await refused(agent, "add_file", path=".env")
        assert "holds secrets" in secret
        backwards = await refused(agent, "add_region", path="app.py", start_line=5, end_line=2)
        assert "end_line" in backwards
        assert "(the context window is empty)" in await call(agent, "get_context")
