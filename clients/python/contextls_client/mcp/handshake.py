"""The stdio wire, and the ``initialize`` answer given before the MCP SDK is loaded.

Importing the SDK (pydantic models of every protocol version) takes about half a
second, twice what the reference servers need to start, and a host waits for the
answer to ``initialize`` before it sends anything else. So the answer is written at
once, from what this server declares, while the SDK loads; the SDK is then handed
the same request (its own answer to it is held back, and compared) and everything
the host sent after it.

Every era a host opens with gets the early answer: ``initialize`` at each handshake
version (2024-11-05 to 2025-11-25: Claude Code, Claude Desktop, VS Code, Gemini CLI,
Codex) and the 2026-07-28 ``server/discover``. Any other opening (a version the SDK
does not speak, a malformed request) waits for the SDK, which answers it with its own
checks and errors. This module stays light: json and os, no asyncio, no SDK.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Mapping
from typing import Any, Final

EARLY_VERSION: Final = "2025-11-25"
"""The latest handshake version."""
HANDSHAKE_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", EARLY_VERSION)
"""The ``initialize`` versions answered before the SDK loads."""
DISCOVER_VERSIONS: Final = ("2026-07-28",)
"""The versions ``server/discover`` is answered for before the SDK loads."""
VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"

CAPABILITIES: Final[Mapping[str, Any]] = {
    "prompts": {"listChanged": False},
    "resources": {"subscribe": True, "listChanged": True},
    "tools": {"listChanged": False},
}
"""What the server built in ``server.py`` declares at the handshake (a test holds the SDK's
own answer equal to the early one, at every version)."""
DISCOVER_CAPABILITIES: Final[Mapping[str, Any]] = {
    "prompts": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "tools": {"listChanged": True},
}
"""What it declares to ``server/discover`` (held equal to the SDK's the same way)."""

READ_SIZE: Final = 65536


class Wire:
    """The host's pipes, moved off fd 0 and 1.

    The protocol goes through private duplicates; fd 0 then reads nothing and fd 1
    goes to stderr, so no stray print of a library can break a message.
    """

    def __init__(self) -> None:
        self.input = os.dup(0)
        self.output = os.dup(1)
        nothing = os.open(os.devnull, os.O_RDONLY)
        os.dup2(nothing, 0)
        os.close(nothing)
        os.dup2(2, 1)
        self.pending = b""
        """What was read past the lines handed out so far."""
        self._writing = threading.Lock()
        """The early reader and the SDK may both write: one whole message at a time."""

    def read_line(self) -> bytes:
        """The next line the host sent (with its newline), or what is left at end of input."""
        while b"\n" not in self.pending:
            chunk = os.read(self.input, READ_SIZE)
            if not chunk:
                line, self.pending = self.pending, b""
                return line
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line + b"\n"

    def write(self, data: bytes) -> None:
        with self._writing:
            view = memoryview(data)
            while view:
                written = os.write(self.output, view)
                view = view[written:]


def early_answer(opening: bytes, server_info: Mapping[str, str], instructions: str) -> Any:
    """The answer to ``opening`` if it is an ``initialize`` at a handshake version or a
    ``server/discover`` at a version of ``DISCOVER_VERSIONS``, else None."""
    try:
        message = json.loads(opening)
    except ValueError:
        return None
    if not isinstance(message, dict):
        return None
    params = message.get("params")
    request_id = message.get("id")
    if not isinstance(params, dict) or not isinstance(request_id, int | str):
        return None
    if message.get("method") == "initialize":
        result = _initialized(params, server_info, instructions)
    elif message.get("method") == "server/discover":
        result = _discovered(params, server_info, instructions)
    else:
        return None
    if result is None:
        return None  # the SDK answers, with its own checks and errors
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _initialized(
    params: Mapping[str, Any], server_info: Mapping[str, str], instructions: str
) -> dict[str, Any] | None:
    version = params.get("protocolVersion")
    if version not in HANDSHAKE_VERSIONS or not isinstance(params.get("clientInfo"), dict):
        return None
    return {
        "protocolVersion": version,
        "capabilities": CAPABILITIES,
        "serverInfo": dict(server_info),
        "instructions": instructions,
    }


def _discovered(
    params: Mapping[str, Any], server_info: Mapping[str, str], instructions: str
) -> dict[str, Any] | None:
    meta = params.get("_meta")
    if not isinstance(meta, dict) or meta.get(VERSION_KEY) not in DISCOVER_VERSIONS:
        return None
    if not isinstance(meta.get("io.modelcontextprotocol/clientCapabilities"), dict):
        return None
    return {
        "cacheScope": "private",
        "capabilities": DISCOVER_CAPABILITIES,
        "instructions": instructions,
        "resultType": "complete",
        "supportedVersions": list(DISCOVER_VERSIONS),
        "ttlMs": 0,
        "_meta": {"io.modelcontextprotocol/serverInfo": dict(server_info)},
    }


def encode(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def note(text: str) -> None:
    """A line for the person reading the host's MCP log (stderr; stdout is the protocol)."""
    print(f"contextls mcp: {text}", file=sys.stderr, flush=True)
