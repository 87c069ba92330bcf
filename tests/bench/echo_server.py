"""The floor: a minimal asyncio JSON-RPC server over stdio.

What a hand-written LSP loop costs and nothing more: Content-Length framing,
``json.loads``/``json.dumps``, one ``write`` + ``flush`` per response. It
answers ``initialize`` with ``{"capabilities": {}}``, ``shutdown`` with null,
every other request with its own params (echo), ignores notifications, and
exits on ``exit``. Deliberately stdlib-only so it stays an honest floor.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any


async def serve() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    out = sys.stdout.buffer
    while True:
        try:
            headers = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return
        length = 0
        for line in headers.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        msg: dict[str, Any] = json.loads(await reader.readexactly(length))
        method = msg.get("method")
        if method == "exit":
            return
        if "id" not in msg:
            continue
        if method == "initialize":
            result: Any = {"capabilities": {}}
        elif method == "shutdown":
            result = None
        else:
            result = msg.get("params")
        body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
        out.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        out.flush()


if __name__ == "__main__":
    asyncio.run(serve())
