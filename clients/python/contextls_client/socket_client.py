"""The blocking driver of ``rpc.Connection``: the CLI's session on the daemon's Unix socket,
or on a server of its own spawned over stdio (``$CONTEXTLS_NO_DAEMON``, ``:memory:``).

A CLI command sends a few requests one after another, so it needs no event loop
(importing asyncio alone would cost a command ~30 ms, as much as the rest of a warm one).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, Final, TypeVar

import msgspec

from contextls.common.places import peer_uid
from contextls.protocol import (
    DidEvictParams,
    Request,
    Requests,
    ServerInfo,
    ServerInfoParams,
    Status,
    Wire,
)
from contextls_client.messages import (
    CLIENT_NAME,
    ContextlsError,
    ReceivedNotification,
    ServerGoneError,
)
from contextls_client.rpc import Answer, RpcConnection

if TYPE_CHECKING:
    from subprocess import Popen

ResultT = TypeVar("ResultT")
P = TypeVar("P", bound=Wire)
R = TypeVar("R", bound=Wire)

READ_CHUNK: Final = 256 * 1024
SERVER_COMMAND: Final[tuple[str, ...]] = (sys.executable, "-P", "-m", "contextls", "serve")
"""A server of one command: this interpreter's package. ``-P``: the current directory,
which may hold a ``types.py``, is never on ``sys.path``."""


class DaemonClient:
    """One LSP session for one CLI command: on the daemon's socket, or on a spawned server."""

    def __init__(
        self,
        socket_path: Path | None = None,
        request_timeout: float = 120.0,
        connected: socket.socket | None = None,
        command: Sequence[str] | None = None,
        client_name: str = CLIENT_NAME,
    ) -> None:
        """``connected``: a connection already made to ``socket_path`` (see ``daemon``);
        no ``socket_path``: spawn ``command`` (default :data:`SERVER_COMMAND`)."""
        self.socket = socket_path
        self.request_timeout = request_timeout
        self.command = tuple(command) if command else SERVER_COMMAND
        self.rpc = RpcConnection(client_name)
        self.server_info: ServerInfo | None = None
        """What the daemon said of itself, when asked (``session.current_daemon``)."""
        self._initializing: int | None = None
        self.server_capabilities: dict[str, Any] = {}
        self._connected = connected
        self._sock: socket.socket | None = None
        self._process: Popen[bytes] | None = None
        self._answers: deque[Answer] = deque()

    @property
    def notifications(self) -> list[ReceivedNotification]:
        return self.rpc.notifications

    def start(self) -> None:
        if self._sock is not None or self._process is not None:
            return  # already connected (asked the daemon's version first, say)
        if self.socket is None:
            self._spawn()
            return
        if self._connected is not None:
            self._sock, self._connected = self._connected, None
            self._sock.settimeout(self.request_timeout)
            return
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.request_timeout)
        try:
            sock.connect(str(self.socket))
        except OSError as error:
            sock.close()
            raise ServerGoneError(
                f"cannot connect to the daemon at {self.socket}: {error}"
            ) from error
        if peer_uid(sock) != os.getuid():
            sock.close()
            raise ServerGoneError(f"{self.socket} is served by another user; not talking to it")
        self._sock = sock

    def _spawn(self) -> None:
        import subprocess  # only for a server of its own: ~10 ms a warm command never pays

        try:
            self._process = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=None,  # the server's own words reach the person as they come
            )
        except OSError as error:
            raise ServerGoneError(
                f"cannot start the server {list(self.command)}: {error}"
            ) from error

    def hello(
        self, root: str | os.PathLike[str] | None, options: Mapping[str, Any] | None = None
    ) -> ServerInfo:
        """Ask what the daemon runs and, with ``root``, open the session on that folder, in
        one write: one round trip. Opening a session changes nothing, so it may go out
        before the answer says whether this daemon is the one to use."""
        asked = self.rpc.request(Requests.SERVER_INFO.method, ServerInfoParams())
        if root is not None:
            self._initializing = self.rpc.initialize(root, options or {})
            self.rpc.notify("initialized", {})
        info = self._wait(asked, "serverInfo").decode(ServerInfo, "serverInfo")
        self.server_info = info
        return info

    def initialize(
        self, root: str | os.PathLike[str], options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Open the session on ``root`` (or wait for the answer ``hello`` asked for)."""
        sent, self._initializing = self._initializing, None
        if sent is None:
            sent = self.rpc.initialize(root, options or {})
            self.rpc.notify("initialized", {})
        result = self._wait(sent, "initialize").decode(dict[str, Any], "initialize")
        self.server_capabilities = result.get("capabilities", {})
        return self.server_capabilities

    def detach(self) -> socket.socket:
        """Hand the daemon's connection over (to the asyncio driver, with ``rpc``)."""
        sock, self._sock = self._sock, None
        assert sock is not None and not self._answers, "nothing may be waiting on it"
        sock.settimeout(None)
        return sock

    def close(self) -> None:
        """End the session. On the daemon, closing the connection ends it (the daemon
        goes on); a server of its own is told ``exit`` and waited for."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        process = self._process
        if process is not None:
            import subprocess

            with contextlib.suppress(ServerGoneError, ContextlsError):
                self._wait(self.rpc.request("shutdown", None), "shutdown")
                self.rpc.notify("exit", None)
                self._flush()
            self._process = None
            assert process.stdin is not None
            process.stdin.close()
            try:
                process.wait(10.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()

    def __enter__(self) -> DaemonClient:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc is None or isinstance(exc, ContextlsError):
            self.finish()
        self.close()

    def finish(self) -> None:
        """Read the notifications the server sent with its last answer (the CLI reports
        evictions from them). The daemon writes a turn's answers and the notifications of
        its commit in one write, after the commit: they are here already, and the session
        needs no ``shutdown`` round trip (closing the connection ends it). A server of its
        own is told ``shutdown`` in ``close``, whose answer comes after everything."""
        sock = self._sock
        if sock is None:
            return
        sock.setblocking(False)
        try:
            while data := sock.recv(READ_CHUNK):
                self._answers.extend(self.rpc.receive(data))
        except (BlockingIOError, InterruptedError, ServerGoneError, OSError):
            pass
        finally:
            sock.settimeout(self.request_timeout)

    # ------------------------------------------------------------------ messages

    def call(self, request: Request[P, R], params: P) -> R:
        return self.request(request.method, params, request.result)

    def request(
        self,
        method: str,
        params: msgspec.Struct | Mapping[str, Any] | None,
        result_type: type[ResultT] | None,
    ) -> ResultT:
        return self._wait(self.rpc.request(method, params), method).decode(result_type, method)

    def notify(self, method: str, params: msgspec.Struct | Mapping[str, Any] | None) -> None:
        self.rpc.notify(method, params)
        self._flush()

    def evictions(self) -> list[DidEvictParams]:
        return self.rpc.evictions()

    @property
    def latest_status(self) -> Status | None:
        return self.rpc.latest_status

    # ----------------------------------------------------------------- internals

    def _flush(self) -> None:
        data = self.rpc.data_to_send()
        if not data:
            return
        try:
            if self._sock is not None:
                self._sock.sendall(data)
            elif self._process is not None:
                stdin = self._process.stdin
                assert stdin is not None
                stdin.write(data)
                stdin.flush()
            else:
                raise ServerGoneError("not connected to the server")
        except OSError as error:
            raise ServerGoneError(f"the server closed the connection ({error})") from error

    def _read(self, method: str) -> bytes:
        try:
            if self._sock is not None:
                return self._sock.recv(READ_CHUNK)
            if self._process is not None:
                stdout: IO[bytes] | None = self._process.stdout
                assert stdout is not None
                return stdout.read1(READ_CHUNK)  # type: ignore[attr-defined,no-any-return]
        except TimeoutError as error:
            raise ServerGoneError(f"no answer to {method} from the daemon in time") from error
        except OSError as error:
            raise ServerGoneError(f"the server broke the connection ({error})") from error
        raise ServerGoneError("not connected to the server")

    def _wait(self, request_id: int, method: str) -> Answer:
        self._flush()
        while True:
            while self._answers:
                answer = self._answers.popleft()
                if answer.id == request_id:
                    return answer
            data = self._read(method)
            if not data:
                why = self.rpc.end_of_input()
                if self._process is not None and self._process.poll() is not None:
                    why += f" (exit code {self._process.returncode})"
                raise ServerGoneError(f"{why} before answering {method}")
            self._answers.extend(self.rpc.receive(data))
            self._flush()  # answers to the server's own requests
