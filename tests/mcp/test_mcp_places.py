"""Which daemon, database and workspace a session serves, as hosts start it.

Hosts spawn MCP servers with a stripped environment (both SDKs pass only ``HOME
LOGNAME PATH SHELL TERM USER``), and some start them in ``/``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from ..cli.conftest import Cli, find_executable
from .conftest import agent, call, refused

HOST_KEPT = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")


class User:
    """A person's shell: their HOME, and the runtime directory a login session gives."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.stripped = {name: os.environ[name] for name in HOST_KEPT if name in os.environ}
        self.stripped["HOME"] = str(home)
        self.shell = dict(self.stripped)
        login_runtime = Path(f"/run/user/{os.getuid()}")
        if login_runtime.is_dir():
            self.shell["XDG_RUNTIME_DIR"] = str(login_runtime)

    def run(self, cwd: Path, *args: str) -> str:
        done = subprocess.run(
            [find_executable(), *args],
            env=self.shell,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout


@pytest.fixture
def user(tmp_path: Path) -> Iterator[User]:
    person = User(tmp_path / "home")
    person.home.mkdir()
    yield person
    person.run(person.home, "daemon", "stop")


async def test_a_stripped_environment_reaches_the_users_daemon_and_database(
    project: Cli, user: User
) -> None:
    user.run(project.workspace, "add-text", "from the editor")
    daemon = json.loads(user.run(project.workspace, "daemon", "status", "--json"))
    assert daemon["running"] and daemon["server"]["daemon"] and daemon["pid"]
    host_env = {"HOME": str(user.home)}  # over what the SDK keeps: exactly a host's
    async with agent(project, "legacy", env=host_env) as client:
        assert f"Database: {daemon['storage']}" in (client.instructions or "")
        status = await call(client, "status")
        assert f"database: {daemon['storage']} (daemon pid {daemon['pid']}," in status
        assert "from the editor" in await call(client, "get_context")
        await call(client, "add_text", content="from the agent")
    assert "from the agent" in user.run(project.workspace, "show")


async def test_the_hosts_roots_choose_the_workspace_when_started_in_the_root(
    project: Cli,
) -> None:
    asked: list[bool] = []

    async def roots(_: Any) -> types.ListRootsResult:
        asked.append(True)
        return types.ListRootsResult(
            roots=[types.Root(uri=project.workspace.as_uri(), name="project")]
        )

    async with agent(project, "legacy", cwd=Path("/"), list_roots_callback=roots) as client:
        await call(client, "add_text", content="chosen by roots")
        assert f"workspace: {project.workspace}" in await call(client, "status")
    assert asked == [True]
    assert "chosen by roots" in project("show").stdout


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_started_in_the_root_without_roots_the_agent_is_told_what_to_pass(
    project: Cli, mode: str
) -> None:
    async with agent(project, mode, cwd=Path("/")) as client:
        told = await refused(client, "get_context")
        assert "--workspace" in told and "open a folder" not in told
    async with agent(
        project, mode, args=("--workspace", str(project.workspace)), cwd=Path("/")
    ) as client:
        await call(client, "add_text", content="named")
    assert "named" in project("show").stdout
