"""Transport tuning for pygls, through its public API only.

Measured on these machines, stock pygls 2.x over stdio spends most of a custom
request in two places: ``_dict_to_object`` (a JSON round trip and a new
namedtuple class for every custom request's params) and the thread-pool
stdin reader (a thread hop per header line and per body). Here:

* ``converter_factory`` keeps the params and results of messages that have no
  lsprotocol type as plain dicts; standard LSP messages are still structured
  into lsprotocol types by the stock converter.
* ``serve`` reads frames with an asyncio ``StreamReader`` on the stdin pipe (or
  a loopback TCP socket), decodes each body once with msgspec, and hands the
  top-level message to ``protocol.structure_message``/``handle_message``.
  Unlike pygls' loop it also answers what it cannot read: a body that is not
  JSON gets -32700, a request that is not a JSON-RPC object gets -32600, and a
  standard request whose params do not fit their lsprotocol type gets -32602
  naming the field, instead of being dropped without a reply.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

import cattrs
import msgspec
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCProtocol,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 256 * 1024 * 1024
_READ_LIMIT = 1024 * 1024


def converter_factory() -> cattrs.Converter:
    """pygls' converter, except custom messages keep their params as dicts."""
    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]

    def request(obj: dict[str, Any], _: type) -> JsonRPCRequestMessage:
        return JsonRPCRequestMessage(
            id=obj["id"], method=obj["method"], jsonrpc=obj["jsonrpc"], params=obj.get("params")
        )

    def notification(obj: dict[str, Any], _: type) -> JsonRPCNotification:
        return JsonRPCNotification(
            method=obj["method"], jsonrpc=obj["jsonrpc"], params=obj.get("params")
        )

    def response(obj: dict[str, Any], _: type) -> JsonRPCResponseMessage:
        return JsonRPCResponseMessage(
            id=obj["id"], jsonrpc=obj["jsonrpc"], result=obj.get("result")
        )

    converter.register_structure_hook(JsonRPCRequestMessage, request)
    converter.register_structure_hook(JsonRPCNotification, notification)
    converter.register_structure_hook(JsonRPCResponseMessage, response)
    return converter


class FrameWriter:
    """Writes our own error replies with the same framing pygls uses."""

    def __init__(self, write: Callable[[bytes], object]) -> None:
        self._write = write

    def error(self, msg_id: Any, code: int, message: str) -> None:
        body = msgspec.json.encode(
            {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
        )
        header = f"Content-Length: {len(body)}\r\n\r\n".encode("ascii")
        self._write(header + body)


class Dispatcher:
    """Turns one frame body into a pygls message, or into an error reply."""

    def __init__(self, protocol: JsonRPCProtocol, frames: FrameWriter) -> None:
        self.protocol = protocol
        self.frames = frames

    def __call__(self, body: bytes) -> None:
        try:
            data = msgspec.json.decode(body)
        except msgspec.DecodeError as error:
            self.frames.error(None, -32700, f"parse error: {error}")
            return
        if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
            msg_id = data.get("id") if isinstance(data, dict) else None
            self.frames.error(msg_id, -32600, "invalid request: expected a JSON-RPC 2.0 object")
            return
        method = data.get("method")
        is_request = "id" in data and method is not None
        if method is not None and not isinstance(method, str):
            self.frames.error(data.get("id"), -32600, "invalid request: method must be a string")
            return
        try:
            message = self.protocol.structure_message(data)
        except Exception as error:
            if is_request:
                self.frames.error(data["id"], -32602, _describe(method, error))
            else:
                log.warning("dropped a malformed message: %s", _describe(method, error))
            return
        self.protocol.handle_message(message)


def _describe(method: Any, error: Exception) -> str:
    cause = error.__cause__
    if isinstance(cause, cattrs.BaseValidationError):
        details = "; ".join(cattrs.transform_error(cause, path="$"))
        return f"invalid params for {method}: {details}"
    return f"invalid message for {method}: {cause or error}"


async def read_frames(reader: Any, dispatch: Dispatcher) -> None:
    """Content-Length framed bodies until end of input."""
    while True:
        length: int | None = None
        while True:
            line = await reader.readline()
            if not line:
                return
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii", "replace").partition(":")
            if name.strip().lower() == "content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    length = None
        if length is None or not 0 <= length <= MAX_BODY_BYTES:
            dispatch.frames.error(None, -32700, "parse error: missing or bad Content-Length")
            continue
        body = await reader.readexactly(length)
        dispatch(body)


async def _stdin_reader(stdin: BinaryIO) -> Any:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_READ_LIMIT)
    mode = os.fstat(stdin.fileno()).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        # epoll refuses files and some character devices (/dev/null) only
        # once the loop watches them, and then nothing is ever read.
        return StdinAsyncReader(stdin)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except (ValueError, OSError):
        # A regular file or a terminal cannot be watched by the event loop;
        # pygls' thread-backed reader works for every kind of stdin.
        return StdinAsyncReader(stdin)
    return reader


def serve_stdio(protocol: JsonRPCProtocol) -> int:
    stdout = StdoutWriter(sys.stdout.buffer)
    protocol.set_writer(stdout)

    async def main() -> None:
        reader = await _stdin_reader(sys.stdin.buffer)
        await read_frames(reader, Dispatcher(protocol, FrameWriter(stdout.write)))

    return _run(main())


def serve_tcp(protocol: JsonRPCProtocol, host: str, port: int) -> int:
    """One client over loopback TCP (the server ends when it disconnects)."""

    async def main() -> None:
        done = asyncio.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            protocol.set_writer(writer)  # type: ignore[arg-type]
            try:
                await read_frames(reader, Dispatcher(protocol, FrameWriter(writer.write)))
            finally:
                done.set()

        server = await asyncio.start_server(connection, host, port, limit=_READ_LIMIT)
        bound = ", ".join(str(sock.getsockname()) for sock in server.sockets)
        print(f"contextls listening on {bound}", file=sys.stderr, flush=True)
        async with server:
            await done.wait()

    return _run(main())


def _run(main: Any) -> int:
    try:
        asyncio.run(main)
    except SystemExit as exit_:  # the `exit` notification
        return int(exit_.code or 0)
    except (BrokenPipeError, ConnectionResetError, asyncio.IncompleteReadError):
        log.info("the client went away")
    except KeyboardInterrupt:
        pass
    return 0
