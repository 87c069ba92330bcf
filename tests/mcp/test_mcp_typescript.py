"""``contextls mcp`` from a client nobody here wrote: the official TypeScript SDK's ``Client``.

``client.mjs`` plays the host (2025-11-25, started in ``/`` with the project as its
root) and reports what it saw; this test checks the report. Its npm packages come
from ``make test-python`` (``scripts/install-mcp-test-clients.sh``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ..cli.conftest import Cli, find_executable

HERE = Path(__file__).parent
SDK = HERE / "node_modules" / "@modelcontextprotocol" / "sdk"


@pytest.fixture(scope="module")
def node() -> str:
    found = shutil.which("node")
    if found is None or not SDK.is_dir():
        pytest.fail("node and tests/mcp/node_modules are missing: run `make test-python`")
    return found


def run_client(node: str, project: Cli) -> dict[str, Any]:
    done = subprocess.run(
        [node, str(HERE / "client.mjs"), find_executable(), str(project.workspace)],
        capture_output=True,
        text=True,
        env=project.env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_the_typescript_sdk_client_uses_every_tool_and_hears_every_change(
    node: str, project: Cli
) -> None:
    report = run_client(node, project)
    context = "contextls://context/project"
    assert report["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    assert "Database: " in report["instructions"]
    tools = {tool["name"]: tool for tool in report["tools"]}
    assert len(tools) == 16
    for name, tool in tools.items():
        hints = tool["annotations"]
        assert tool["title"] and not tool["undescribed"] and not tool["hasOutputSchema"], name
        assert {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} <= set(hints)
    assert tools["get_context"]["annotations"]["readOnlyHint"] is True
    for name, result in report["calls"].items():
        assert not result["isError"], (name, result["text"])
        assert result["structured"] is None, name
    calls = report["calls"]
    assert calls["add_text"]["text"].startswith("added ctx-1 text")
    assert "def f1():" in calls["get_context"]["text"]
    assert calls["restore"]["text"].startswith("restored ctx-1")
    assert f"workspace: {project.workspace}" in calls["status"]["text"]  # from the roots
    # app.py is whole in the window: a definition of it adds nothing, and says so
    assert calls["add_symbol"]["text"].startswith("already in the window: ctx-2 file app.py")
    assert (
        "map of the repository" in calls["add_map"]["text"]
        and "│def f3():" not in calls["add_map"]["text"]
    )
    assert report["resources"][0] == context
    assert set(report["resources"][1:]) == {"contextls://item/ctx-1", "contextls://item/ctx-2"}
    assert report["templates"] == ["contextls://item/{item_id}"]
    assert "the cache is warmed" in report["contextText"]
    assert report["prompts"] == ["context"] and "the cache is warmed" in report["promptText"]
    one_change = sorted([f"updated {context}", "list_changed"])
    assert report["heard"]["cliChange"] == one_change
    assert (
        not report["afterKill"]["isError"] and "the cache is warmed" in report["afterKill"]["text"]
    )
    assert report["newPid"] != report["oldPid"]
    assert report["heard"]["afterRestart"] == one_change
    assert "after the restart" in project("show").stdout
