"""The real server over raw stdio, for what an LSP library hides.

``RawServer`` in ``test_hostile`` reads replies synchronously; this one reads
the server's output on a thread into a queue, so a test can write many frames
in one ``write``, see every message in arrival order (responses and
notifications interleaved), wait with a timeout instead of hanging when an
answer never comes, signal the process, and read until it closes its output.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import signal
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

from contextls.protocol.framing import MessageReader
from contextls.protocol.framing import frame as frame_body

from .conftest import SERVER

TIMEOUT = 20.0

END_OF_OUTPUT = object()


class Garbled:
    """What the reader thread found instead of a well-formed frame."""

    def __init__(self, problem: str) -> None:
        self.problem = problem


def frame(message: Any) -> bytes:
    return frame_body(json.dumps(message, ensure_ascii=False).encode())


def request(msg_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def read_message(messages: MessageReader, stream: IO[bytes]) -> Any:
    """The next framed JSON message of ``stream``, or ``END_OF_OUTPUT`` at its end.

    ``messages`` keeps what was read past the message (one per stream).
    Raises ValueError (FramingError, UnicodeDecodeError) for output that is
    not a frame.
    """
    body = messages.read(stream)  # type: ignore[arg-type]
    if body is None:
        return END_OF_OUTPUT
    try:
        return json.loads(body)
    except ValueError as error:
        raise ValueError(f"{error} in the frame {body[:300]!r}") from error


def read_all_messages(data: bytes) -> list[Any]:
    """Every framed message of a whole output."""
    stream = io.BytesIO(data)
    reader = MessageReader()
    messages = []
    while (message := read_message(reader, stream)) is not END_OF_OUTPUT:
        messages.append(message)
    return messages


def is_response(message: dict[str, Any]) -> bool:
    return "method" not in message and "id" in message


class RawStdio:
    """One ``python -m contextls serve`` process, initialized for ``root`` on ``storage``."""

    def __init__(
        self,
        root: Path,
        storage: Path,
        options: dict[str, Any] | None = None,
        log: Path | None = None,
        env: dict[str, str | None] | None = None,
    ) -> None:
        """``env``: variables to set for the server (None removes one)."""
        self._log: IO[bytes] | None = log.open("ab") if log is not None else None
        environment = dict(os.environ)
        for name, value in (env or {}).items():
            if value is None:
                environment.pop(name, None)
            else:
                environment[name] = value
        self.process = subprocess.Popen(
            SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log if self._log is not None else subprocess.DEVNULL,
            env=environment,
        )
        self.seen: list[dict[str, Any]] = []
        """Every message read so far, in arrival order."""
        self._queue: queue.Queue[Any] = queue.Queue()
        self._eof = False
        self._gate = threading.Event()
        self._gate.set()
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        self._next_id = 0
        reply = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "capabilities": {},
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "initializationOptions": {"storage": str(storage), **(options or {})},
            },
        )
        assert "result" in reply, reply
        self.send(notification("initialized", {}))

    # ------------------------------------------------------------------ output

    def _read_loop(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        frames = MessageReader()
        try:
            while True:
                self._gate.wait()
                message = read_message(frames, stdout)
                if message is END_OF_OUTPUT:
                    return
                self._queue.put(message)
        except (ValueError, UnicodeDecodeError) as error:
            self._queue.put(Garbled(str(error)))
        finally:
            self._queue.put(END_OF_OUTPUT)

    def hold_output(self) -> None:
        """Stop reading the server's output (after the frame being read), so its pipe fills."""
        self._gate.clear()

    def release_output(self) -> None:
        self._gate.set()

    def _next(self, timeout: float, waiting_for: str) -> Any:
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"{waiting_for}: nothing within {timeout} s") from None
        if isinstance(item, Garbled):
            self._eof = True
            raise AssertionError(f"the server's output is not well-formed: {item.problem}")
        if item is END_OF_OUTPUT:
            self._eof = True
        else:
            self.seen.append(item)
        return item

    def read(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next message; fails the test if none comes in time or the output ended."""
        if self._eof:
            raise AssertionError("the server closed its output")
        message = self._next(timeout, "waiting for a message")
        if message is END_OF_OUTPUT:
            raise AssertionError("the server closed its output")
        result: dict[str, Any] = message
        return result

    def read_until_eof(self, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        """Everything the server writes until it closes its output (all well-formed)."""
        messages: list[dict[str, Any]] = []
        while not self._eof:
            item = self._next(timeout, "waiting for the server to close its output")
            if item is not END_OF_OUTPUT:
                messages.append(item)
        return messages

    def reply_to(self, msg_id: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        while True:
            message = self.read(timeout)
            if is_response(message) and message["id"] == msg_id:
                return message

    def notifications(self, method: str) -> list[Any]:
        """The params of every ``method`` notification read so far, in order."""
        return [m["params"] for m in self.seen if m.get("method") == method and "id" not in m]

    # ------------------------------------------------------------------- input

    def write(self, data: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(data)
        stdin.flush()

    def send(self, *messages: Any) -> None:
        """All messages in one write."""
        self.write(b"".join(frame(message) for message in messages))

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def request(self, method: str, params: Any = None, timeout: float = TIMEOUT) -> dict[str, Any]:
        msg_id = self.new_id()
        self.send(request(msg_id, method, params))
        return self.reply_to(msg_id, timeout)

    def result(self, method: str, params: Any = None) -> Any:
        reply = self.request(method, params)
        assert "result" in reply, reply
        return reply["result"]

    def warm_up(self) -> None:
        """Load the tokenizer without touching the store.

        The first change otherwise spends a fraction of a second loading the
        encoding, which would blur what a test times or races against.
        """
        self.result("contextls/countTokens", {"text": "warm up"})

    def close_stdin(self) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.close()

    def terminate(self) -> None:
        self.process.send_signal(signal.SIGTERM)

    def wait(self, timeout: float = TIMEOUT) -> int:
        return self.process.wait(timeout=timeout)

    def shutdown_and_exit(self) -> int:
        reply = self.request("shutdown")
        assert "error" not in reply, reply
        self.send(notification("exit"))
        return self.wait()

    def kill(self) -> None:
        self.release_output()
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=TIMEOUT)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if self._log is not None:
            self._log.close()


class RawServers:
    """Starts raw servers for one test and kills whatever is still running at its end."""

    def __init__(self, root: Path, storage: Path, log: Path | None = None) -> None:
        self.root = root
        self.storage = storage
        self.log = log
        self.started: list[RawStdio] = []

    def __call__(
        self, options: dict[str, Any] | None = None, env: dict[str, str | None] | None = None
    ) -> RawStdio:
        server = RawStdio(self.root, self.storage, options, self.log, env)
        self.started.append(server)
        return server

    def close_all(self) -> None:
        for server in self.started:
            server.kill()
