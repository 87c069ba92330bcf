"""The opening exchange over raw JSON-RPC, at every protocol version a host may send.

``initialize`` at each handshake version and the 2026-07-28 ``server/discover`` are
answered before the SDK loads; the SDK's own answer is held back and compared (a
difference is logged on stderr, which these tests read). Any other opening is the
SDK's to answer.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from ..cli.conftest import Cli, find_executable

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def exchange(project: Cli, messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """Send ``messages``; once each request is answered, close the input. Every answer and
    notification, and stderr."""
    expected = sum(1 for message in messages if "id" in message)
    process = subprocess.Popen(
        [find_executable(), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=project.workspace,
        env=project.env,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("".join(json.dumps(message) + "\n" for message in messages))
    process.stdin.flush()
    received: list[dict[str, Any]] = []
    while sum(1 for message in received if "id" in message) < expected:
        line = process.stdout.readline()
        assert line, "contextls mcp closed its output"
        received.append(json.loads(line))
    _, log = process.communicate(timeout=60)
    assert process.returncode == 0, log
    return received, log


def initialize(version: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_each_handshake_version_is_answered_once_and_as_the_sdk_would(
    project: Cli, version: str
) -> None:
    answers, log = exchange(project, [initialize(version), INITIALIZED, LIST_TOOLS])
    assert [answer.get("id") for answer in answers] == [1, 2]
    result = answers[0]["result"]
    assert result["protocolVersion"] == version
    assert result["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    assert result["serverInfo"]["name"] == "contextls"
    assert "differs" not in log, log
    assert len(answers[1]["result"]["tools"]) == 16


def test_a_2026_version_in_initialize_gets_the_latest_handshake(project: Cli) -> None:
    answers, _ = exchange(project, [initialize("2026-07-28"), INITIALIZED, LIST_TOOLS])
    assert answers[0]["result"]["protocolVersion"] == "2025-11-25"
    assert [answer.get("id") for answer in answers] == [1, 2]


def test_resources_subscribe_is_served_at_the_handshake(project: Cli) -> None:
    subscribe = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "resources/subscribe",
        "params": {"uri": "contextls://context/project"},
    }
    answers, _ = exchange(project, [initialize("2025-11-25"), INITIALIZED, subscribe])
    assert answers[1] == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_a_2026_client_discovers_the_server(project: Cli) -> None:
    discover = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
    answers, log = exchange(project, [discover])
    result = answers[0]["result"]
    assert "2026-07-28" in result["supportedVersions"]
    assert result["capabilities"]["resources"]["subscribe"] is True
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "contextls"
    assert "differs" not in log, log  # the early answer is the SDK's


def test_the_tool_list_answered_while_the_sdk_loads_is_the_sdks() -> None:
    from contextls_client.mcp import tools_json

    assert tools_json.main(["--check"]) == 0, "run `python -m contextls_client.mcp.tools_json`"


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (
            {
                "id": 2,
                "method": "tools/call",
                "params": {"name": "add_text", "arguments": {"text": "a \ud800 b"}},
            },
            "$.params.arguments.text",
        ),
        (
            {"id": 3, "method": "tools/call", "params": {"name": "add_\udc00", "arguments": {}}},
            "$.params.name",
        ),
        (
            {
                "id": 4,
                "method": "tools/call",
                "params": {"name": "add_text", "arguments": {"te\ud800xt": "x"}},
            },
            "$.params.arguments (a key)",
        ),
        ({"id": "\ud800", "method": "tools/list"}, "$.id"),
        ({"id": 6, "method": "tools/\ud800"}, "$.method"),
    ],
)
def test_a_lone_surrogate_gets_an_answer_naming_where(
    project: Cli, message: dict[str, Any], field: str
) -> None:
    """The SDK's parser drops a message that holds half a character (the host waited for
    ever); it is answered before the SDK sees it, and the session goes on."""
    listed = {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}
    received, _ = exchange(
        project,
        [
            initialize("2025-06-18"),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", **message},
            listed,
        ],
    )
    answers = [m for m in received if "id" in m and m["id"] != 1]
    refused = next(m for m in answers if m["id"] != 9)
    assert refused["error"]["data"]["field"] == field, refused
    assert refused["id"] == (None if field == "$.id" else message["id"])
    assert any(m["id"] == 9 and m["result"]["tools"] for m in answers)
