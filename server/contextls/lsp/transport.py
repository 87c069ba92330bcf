"""Serving a ContextServer over stdio or loopback TCP, on pygls' public API.

Measured on these machines, stock pygls 2.x over stdio spends most of a custom
request outside the request: in ``_dict_to_object`` (see ``converter``), in the
thread-pool stdin reader (a thread hop per header line and per body), and in
its dispatch and encoding (see ``dispatch``). Here the event loop hands the
bytes of the stdin pipe (or the socket) to ``FrameProtocol``, which
dispatches each frame with ``Dispatcher`` in the same turn; the server's
``Outbox``, which pygls also writes through (``protocol.set_writer``), writes
the answers at the end of that turn.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import stat
import sys
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, BinaryIO, Final

from contextls.lsp.dispatch import Dispatcher
from contextls.lsp.outbox import FrameReader

if TYPE_CHECKING:
    from contextls.lsp.server import ContextServer

log = logging.getLogger(__name__)

_READ_CHUNK = 256 * 1024

TURN_SECONDS: Final = 0.02
"""How long one connection's frames may hold a turn of the loop: a burst that takes longer
(a client pipelining hundreds of adds) goes on at the next turns, after the other
clients' requests read meanwhile. Measured with 100 adds in Claude's tokens in one write
(~0.1 s): another client's status waited the whole burst when a read's frames were all
handled in one turn, 50 ms with a 0.05 s turn, 25 ms with this one, which costs the
burst about a tenth more (a commit and a write each turn)."""


class FrameProtocol(asyncio.Protocol):
    """Handles the frames a read brings in that loop turn, and writes the answers at its end.

    A request is answered in the turn that read it: no task to wake, no
    second turn to write (each costs an extra trip through the event loop,
    which is most of what a small request costs). A pipelined burst is
    answered with one write per turn; one that outlasts ``TURN_SECONDS`` goes on at the
    next turn, with this connection's reading paused until its frames are handled.
    """

    def __init__(self, server: ContextServer, writes_back: bool = False) -> None:
        """``writes_back``: answers go to this connection (TCP), not to stdout."""
        self._server = server
        self._writes_back = writes_back
        self._transport: asyncio.WriteTransport | None = None
        self._outbox = server.outbox
        self._dispatch = _dispatcher(server)
        self._waiting: deque[bytes] = deque()
        self._frames = FrameReader(self._waiting.append, server.outbox)
        self._reading: asyncio.ReadTransport | None = None
        self._next_turn: asyncio.Handle | None = None
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Resolved at the end of input (an IncompleteReadError if it ends inside a frame)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if isinstance(transport, asyncio.ReadTransport):
            self._reading = transport
        if self._writes_back:
            assert isinstance(transport, asyncio.WriteTransport)
            self._transport = transport
            self._outbox.attach(transport.write)
            self._server.protocol.set_writer(self._outbox)

    async def drained(self) -> None:
        """Wait until what was written back has left (TCP)."""
        self._server.end_of_turn()
        transport = self._transport
        while transport is not None and not transport.is_closing():
            if transport.get_write_buffer_size() == 0:
                break
            await asyncio.sleep(0.005)

    def data_received(self, data: bytes) -> None:
        self._frames.feed(data)
        if self._next_turn is None:  # else the frames wait for theirs, in order
            self.handle_waiting()

    def handle_waiting(self, seconds: float | None = TURN_SECONDS) -> None:
        """Handle the frames read, for at most ``seconds`` (None: all of them); commit, then
        write every answer of the turn at once."""
        self._next_turn = None
        self._outbox.hold()
        try:
            self._handle(seconds)
        finally:
            self._server.end_of_turn()

    def _handle(self, seconds: float | None) -> None:
        waiting = self._waiting
        deadline = time.monotonic() + seconds if seconds is not None else None
        while waiting:
            try:
                self._dispatch(waiting.popleft())
            except Exception:  # the dispatcher answers every failure; the rest goes on
                log.exception("handling a message failed")
            if waiting and deadline is not None and time.monotonic() >= deadline:
                self._next_turn = asyncio.get_running_loop().call_soon(self._after_reads)
                if self._reading is not None and self._reading.is_reading():
                    self._reading.pause_reading()
                return
        if self._reading is not None and not self._reading.is_closing():
            self._reading.resume_reading()

    def _after_reads(self) -> None:
        """One turn on: the reads the loop found meanwhile (another client's request) were
        queued after this callback, and are handled before the burst goes on."""
        self._next_turn = asyncio.get_running_loop().call_soon(self.handle_waiting)

    def _handle_the_rest(self) -> None:
        """At the end of input: what was read is handled (and answered) before it ends."""
        if self._next_turn is not None:
            self._next_turn.cancel()
            self.handle_waiting(None)

    def eof_received(self) -> bool:
        self._handle_the_rest()
        self._finish()
        return True  # a socket stays open for the last answers (see ``drained``)

    def connection_lost(self, exc: Exception | None) -> None:
        self._handle_the_rest()
        self._finish()

    def _finish(self) -> None:
        self._dispatch.cancel_all()  # nobody is left to answer
        if self.done.done():
            return
        if self._frames.inside_a_message:
            self.done.set_exception(asyncio.IncompleteReadError(b"", None))
        else:
            self.done.set_result(None)


def _dispatcher(server: ContextServer) -> Dispatcher:
    return Dispatcher(
        server.protocol, server.outbox, server.requests, server.shutting_down, server.uncommitted
    )


async def _read_stdin(protocol: FrameProtocol, stdin: BinaryIO) -> None:
    loop = asyncio.get_running_loop()
    mode = os.fstat(stdin.fileno()).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        try:
            await loop.connect_read_pipe(lambda: protocol, stdin)
        except (ValueError, OSError):
            pass
        else:
            await protocol.done
            return
    # A regular file, a terminal or /dev/null cannot be watched by the event
    # loop (epoll refuses some of them only once it watches them, and then
    # nothing is ever read): read them on a thread.
    fd = stdin.fileno()
    while chunk := await loop.run_in_executor(None, os.read, fd, _READ_CHUNK):
        protocol.data_received(chunk)
    protocol.eof_received()
    await protocol.done


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
        await _read_stdin(FrameProtocol(server), sys.stdin.buffer)

    return _run(main(), server)


def serve_tcp(server: ContextServer, host: str, port: int) -> int:
    """One client over loopback TCP (the server ends when it disconnects)."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        connected: asyncio.Future[FrameProtocol] = loop.create_future()

        def accept() -> asyncio.Protocol:
            if connected.done():  # one client per server process
                return _Refuse()
            protocol = FrameProtocol(server, writes_back=True)
            connected.set_result(protocol)
            return protocol

        listener = await loop.create_server(accept, host, port)
        bound = ", ".join(str(sock.getsockname()) for sock in listener.sockets)
        print(
            f"contextls listening on {bound} (a development aid: no authentication, "
            "the first local process to connect is served)",
            file=sys.stderr,
            flush=True,
        )
        async with listener:
            protocol = await connected
            try:
                await protocol.done
            finally:
                await protocol.drained()

    return _run(main(), server)


class _Refuse(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()


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
