"""Serving a ContextServer over stdio or loopback TCP, on pygls' public API.

Measured on these machines, stock pygls 2.x over stdio spends most of a custom
request outside the request: in ``_dict_to_object`` (see ``converter``), in the
thread-pool stdin reader (a thread hop per header line and per body), and in
its dispatch and encoding (see ``dispatch``). Here frames are read with an
asyncio ``StreamReader`` on the stdin pipe (or the socket), dispatched by
``Dispatcher``, and written by the server's ``Outbox``, which pygls also
writes through (``protocol.set_writer``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import stat
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, BinaryIO

from pygls.io_ import StdinAsyncReader

from contextls.lsp.dispatch import Dispatcher
from contextls.lsp.framing import Frames, read_frames

if TYPE_CHECKING:
    from contextls.lsp.server import ContextServer

log = logging.getLogger(__name__)

_READ_LIMIT = 1024 * 1024


def _dispatcher(server: ContextServer) -> Dispatcher:
    return Dispatcher(server.protocol, server.outbox, server.requests, server.shutting_down)


async def _stdin_reader(stdin: BinaryIO) -> Frames:
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


def _blocking_writer(stdout: BinaryIO) -> Callable[[bytes], None]:
    def write(data: bytes) -> None:
        # Unbuffered (python -u), stdout.buffer is a raw FileIO: a write that
        # a signal interrupts returns how much it wrote, and the rest must follow.
        view = memoryview(data)
        while view:
            view = view[stdout.write(view) or 0 :]
        stdout.flush()

    return write


def serve_stdio(server: ContextServer) -> int:
    server.outbox.attach(_blocking_writer(sys.stdout.buffer))
    server.protocol.set_writer(server.outbox)

    async def main() -> None:
        reader = await _stdin_reader(sys.stdin.buffer)
        await read_frames(reader, _dispatcher(server), server.outbox)

    return _run(main(), server)


def serve_tcp(server: ContextServer, host: str, port: int) -> int:
    """One client over loopback TCP (the server ends when it disconnects)."""

    async def main() -> None:
        done = asyncio.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            server.outbox.attach(writer.write)
            server.protocol.set_writer(server.outbox)
            try:
                await read_frames(reader, _dispatcher(server), server.outbox)
            finally:
                server.outbox.flush()
                await writer.drain()
                done.set()

        listener = await asyncio.start_server(connection, host, port, limit=_READ_LIMIT)
        bound = ", ".join(str(sock.getsockname()) for sock in listener.sockets)
        print(f"contextls listening on {bound}", file=sys.stderr, flush=True)
        async with listener:
            await done.wait()

    return _run(main(), server)


def _run(main: Coroutine[Any, Any, None], server: ContextServer) -> int:
    async def until_done_or_terminated() -> None:
        task = asyncio.ensure_future(main)
        # SIGTERM ends the session like the end of input does: commit, then exit.
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        await task

    code = 0
    try:
        asyncio.run(until_done_or_terminated())
    except SystemExit as exit_:  # the `exit` notification
        code = int(exit_.code or 0)
    except asyncio.CancelledError:
        log.info("terminated")
    except (BrokenPipeError, ConnectionResetError, asyncio.IncompleteReadError):
        log.info("the client went away")
    except KeyboardInterrupt:
        pass
    try:
        server.service.close()  # commits what the last burst changed
    except Exception:
        log.exception("closing the store failed")
    try:
        server.outbox.flush()  # whatever the last turn of the loop left
    except OSError:
        log.info("could not write the last messages: the client went away")
    return code
