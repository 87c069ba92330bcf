"""A scripted stand-in for ``contextls serve``, to test the client library alone.

It answers a handful of methods with canned protocol-shaped results, and a few
``test/*`` methods that misbehave on purpose (crash, ask the client something).
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

# Run as a script by path: the repository root is not on the import path by itself.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.rpc import FrameReader, frame

STATUS: dict[str, Any] = {
    "workspace": "file:///ws",
    "revision": 1,
    "itemCount": 0,
    "maxItems": 50,
    "tokens": 0,
    "maxTokens": 8000,
    "percent": 0.0,
    "pinnedCount": 0,
    "staleCount": 0,
    "archivedCount": 0,
    "evictedTotal": 0,
    "encoding": "o200k_base",
    "evictionPolicy": "fifo",
    "lastEvicted": [],
    "nextEviction": None,
}


def item(item_id: str, content: str) -> dict[str, Any]:
    return {
        "id": item_id,
        "kind": "text",
        "content": content,
        "label": content[:20],
        "timestamp": 1,
        "tokens": 3,
        "metadata": {},
        "pinned": False,
        "stale": False,
    }


def read(frames: FrameReader) -> dict[str, Any] | None:
    stdin = sys.stdin.buffer
    assert isinstance(stdin, io.BufferedReader)  # what reads what has come, not a fixed size
    body = frames.read(stdin)
    if body is None:
        return None
    message: dict[str, Any] = json.loads(body)
    # Strict like a real JSON-RPC peer: the version is required, null params are not allowed.
    assert message.get("jsonrpc") == "2.0", message
    assert "params" not in message or message["params"] is not None, message
    return message


def write(message: dict[str, Any]) -> None:
    # A header besides Content-Length, as some servers send: the client must skip it.
    sys.stdout.buffer.write(
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
        + frame({"jsonrpc": "2.0", **message})
    )
    sys.stdout.buffer.flush()


def main() -> int:
    options: Any = None
    frames = FrameReader()
    while (message := read(frames)) is not None:
        method, request_id = message.get("method"), message.get("id")
        params: dict[str, Any] = message.get("params") or {}
        if method == "initialize":
            options = params["initializationOptions"]
            write({"id": request_id, "result": {"capabilities": {"x": 1}}})
        elif method == "test/options":
            write({"id": request_id, "result": options})
        elif method == "contextls/status":
            write({"method": "contextls/didChangeStatus", "params": STATUS})
            write({"id": request_id, "result": STATUS})
        elif method == "contextls/addText":
            if params["content"] == "refuse":
                error = {"code": -31006, "message": "item has 9 tokens; budget is 5"}
                write({"id": request_id, "error": error})
                continue
            old = item("ctx-1", "old")
            write(
                {
                    "id": request_id,
                    "result": {
                        "item": item("ctx-2", params["content"]),
                        "evicted": [old],
                        "deduplicated": False,
                        "status": STATUS,
                    },
                }
            )
            # After the answer, as a server may do: the client must still see it.
            evict = {"workspace": "file:///ws", "items": [old], "reason": "maxItems"}
            write({"method": "contextls/didEvict", "params": evict})
        elif method == "test/askClient":
            write(
                {
                    "id": "s1",
                    "method": "workspace/configuration",
                    "params": {"items": [{"section": "contextls"}]},
                }
            )
            answer = read(frames)
            assert answer is not None
            write({"id": request_id, "result": answer.get("result")})
        elif method == "test/crash":
            sys.stderr.write("fake server: exploding on purpose\n")
            sys.stderr.flush()
            return 3
        elif method == "test/garbage":
            sys.stdout.buffer.write(b"Content-Length: 5\r\n\r\n{{{{{")
            sys.stdout.buffer.flush()
        elif method == "shutdown":
            write({"id": request_id, "result": None})
        elif method == "exit":
            return 0
        elif request_id is not None:
            write({"id": request_id, "error": {"code": -32601, "message": f"no {method}"}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
