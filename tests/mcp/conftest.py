"""Fixtures for ``contextls mcp`` run as hosts run it, spoken to by clients nobody here wrote.

Each test gets a project (a git repository of its own), its own database and daemon
(``Cli``, as the CLI tests use), and an agent: the official Python SDK's ``Client``
spawning ``contextls mcp`` over stdio, at the handshake era (``legacy``: the
2025-11-25 ``initialize``) or at 2026-07-28 (``auto``). The TypeScript SDK's client
is in ``client.mjs``.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from ..cli.conftest import Cli, find_executable

mcp = pytest.importorskip(
    "mcp", reason="the MCP SDK is the extra contextls[mcp] (make setup installs it)"
)

from mcp import Client, StdioServerParameters  # noqa: E402

collect_ignore = ["node_modules"]

ERAS = ("legacy", "auto")
"""The Python SDK's modes: the 2025-11-25 handshake, and 2026-07-28 (``server/discover``)."""


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Cli]:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "app.py").write_text("".join(f"def f{n}():\n    return {n}\n\n" for n in range(20)))
    (root / ".env").write_text("OPENAI_API_KEY=sk-proj-" + "Ab3" * 15 + "\n")
    runtime = Path(tempfile.mkdtemp(prefix="cls-m-"))  # a socket's path fits in 107 bytes
    runner = Cli(find_executable(), root, tmp_path / "state", runtime)
    yield runner
    runner("daemon", "stop", code=None)
    shutil.rmtree(runtime, ignore_errors=True)


@contextlib.asynccontextmanager
async def agent(
    project: Cli,
    mode: str = "legacy",
    args: tuple[str, ...] = (),
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    **options: Any,
) -> AsyncIterator[Client]:
    """An agent's client, entered and left in the test's own task (anyio's cancel scopes
    must be left in the task that entered them: not an async fixture)."""
    params = StdioServerParameters(
        command=find_executable(),
        args=["mcp", *args],
        env=project.env if env is None else env,
        cwd=cwd or project.workspace,
    )
    async with Client(params, mode=mode, read_timeout_seconds=30, cache=None, **options) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is None, "a text result is sent once, as text"
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.content
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text
