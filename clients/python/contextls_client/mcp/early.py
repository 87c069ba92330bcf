"""What the host hears while the MCP SDK loads: after the opening (``handshake``), the
first ``tools/list``, from the list the SDK itself gives (``tools.json``, generated from
the tools and checked against the SDK's answer).

A thread reads the host's lines from the start: it answers ``tools/list`` until the SDK
runs, and keeps every line, in order, for the SDK (which is handed the requests already
answered too; its answers to them are held back and compared, see ``stdio``). Light:
json, os, threading; no SDK.
"""

from __future__ import annotations

import json
import os
import queue
import threading
from collections.abc import Mapping
from typing import Any, Final

from contextls.common.surrogates import LONE_SURROGATE, lone_surrogate, with_lone_surrogate
from contextls_client.mcp.handshake import Wire, encode

TOOLS_JSON: Final = os.path.join(os.path.dirname(__file__), "tools.json")
MODERN_KEYS: Final = ("cacheScope", "resultType", "ttlMs")


class EarlyAnswers:
    """The answers given before the SDK runs, by request id, and the reader of the wire."""

    def __init__(self, wire: Wire, opening: Mapping[str, Any] | None, era_modern: bool,
                 server_info: Mapping[str, str]) -> None:  # fmt: skip
        self.wire = wire
        self.lock = threading.Lock()
        self.answered: dict[Any, Any] = {}
        """Request id -> the whole answer sent (its result is compared with the SDK's)."""
        if opening is not None:
            self.answered[opening["id"]] = opening
        self.lines: queue.Queue[bytes] = queue.Queue()
        self._modern = era_modern
        self._server_info = dict(server_info)
        self._sdk_runs = opening is None  # nothing answered early: the SDK answers everything
        threading.Thread(target=self._read, name="contextls-early", daemon=True).start()

    def sdk_runs(self) -> None:
        """From now on the SDK answers every request."""
        with self.lock:
            self._sdk_runs = True

    def take(self, message_id: Any) -> Any:
        """The early answer to ``message_id`` (once), or None."""
        with self.lock:
            return self.answered.pop(message_id, None)

    def _read(self) -> None:
        while True:
            line = self.wire.read_line()
            if line and self._refused(line):
                continue  # answered here: the SDK never hears of it (it would drop it)
            if line:
                self._answer(line)
            self.lines.put(line)
            if not line:
                return

    def _refused(self, line: bytes) -> bool:
        """A message holding a lone surrogate (``\\ud800`` escaped in its JSON) is not
        text: the SDK's parser rejects it and answers nothing, so the host would wait for
        ever. A request gets its one error here, naming where; anything else is dropped."""
        found = with_lone_surrogate(line)
        if found is None:
            return False
        message, where = found
        if isinstance(message, dict) and "method" in message and "id" in message:
            request_id = message["id"]
            valid = isinstance(request_id, int | str) and lone_surrogate(request_id, "") is None
            error = {
                "code": -32602 if where.startswith("$.params") else -32600,
                "message": f"{where} {LONE_SURROGATE}",
                "data": {"field": where},
            }
            self.wire.write(
                encode({"jsonrpc": "2.0", "id": request_id if valid else None, "error": error})
            )
        return True

    def _answer(self, line: bytes) -> None:
        with self.lock:
            if self._sdk_runs:
                return
            try:
                message = json.loads(line)
            except ValueError:
                return
            if not isinstance(message, dict) or message.get("method") != "tools/list":
                return
            request_id = message.get("id")
            params = message.get("params") or {}
            if not isinstance(request_id, int | str) or request_id in self.answered:
                return
            if not isinstance(params, dict) or params.get("cursor") is not None:
                return  # a page the SDK knows how to give
            answer = {"jsonrpc": "2.0", "id": request_id, "result": self._tools_result()}
            self.answered[request_id] = answer
            self.wire.write(encode(answer))

    def _tools_result(self) -> dict[str, Any]:
        with open(TOOLS_JSON, encoding="utf-8") as file:
            tools = json.load(file)
        if not self._modern:
            return {"tools": tools}
        return {
            "cacheScope": "private",
            "resultType": "complete",
            "tools": tools,
            "ttlMs": 0,
            "_meta": {"io.modelcontextprotocol/serverInfo": self._server_info},
        }
