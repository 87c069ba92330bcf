"""``contextls serve --tcp``: one client over loopback TCP, answered like stdio.

The server process listens on an ephemeral port (it prints the address on
stderr), serves the first connection, refuses a second one while it runs,
and ends when its client has said ``exit``, writing the last answers first.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextls.protocol.framing import MessageReader
from tests.support.rpc import END_OF_OUTPUT, frame, notification, read_message, request

from .conftest import SERVER

TIMEOUT = 20.0


class TcpClient:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.incoming = sock.makefile("rb")
        self.frames = MessageReader()

    def send(self, *messages: dict[str, Any]) -> None:
        self.sock.sendall(b"".join(frame(message) for message in messages))

    def receive(self) -> dict[str, Any] | None:
        """The next message, or None when the server closed the connection."""
        message = read_message(self.frames, self.incoming)
        return None if message is END_OF_OUTPUT else message  # type: ignore[no-any-return]

    def answer(self, msg_id: int) -> dict[str, Any]:
        while (message := self.receive()) is not None:
            if message.get("id") == msg_id and "method" not in message:
                return message
        raise AssertionError(f"the connection closed before the answer to {msg_id}")


@pytest.fixture
def tcp_server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    env = {**os.environ, "CONTEXTLS_STORAGE": str(tmp_path / "ctx.sqlite3")}
    process = subprocess.Popen(
        [*SERVER, "--tcp", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"'127\.0\.0\.1', (\d+)\)", line)
        assert found, f"no address in {line!r}"
        yield process, int(found.group(1))
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(TIMEOUT)


def test_a_session_over_tcp_is_answered_and_ends_with_exit(
    tcp_server: tuple[subprocess.Popen[str], int], tmp_path: Path
) -> None:
    process, port = tcp_server
    root = tmp_path / "project"
    root.mkdir()
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        client = TcpClient(sock)
        client.send(
            request(
                1, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
            ),
            notification("initialized", {}),
        )
        assert "capabilities" in client.answer(1)["result"]
        # Pipelined: three adds and a status in one write, answered in order.
        client.send(
            *(
                request(10 + n, "contextls/addText", {"kind": "text", "content": f"note {n}"})
                for n in range(3)
            ),
            request(20, "contextls/status", {}),
        )
        ids = [client.answer(10 + n)["result"]["item"]["id"] for n in range(3)]
        assert len(set(ids)) == 3
        assert client.answer(20)["result"]["itemCount"] == 3

        # A second client is turned away while the first one is served.
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as other:
            assert other.recv(1) == b""

        client.send(request(30, "shutdown"))
        assert client.answer(30)["result"] is None
        client.send(notification("exit"))
        while client.receive() is not None:
            pass
    assert process.wait(TIMEOUT) == 0
