"""The quick path's conversation with a daemon, with the standard library only: the
session's opening, frames out and messages in, and the command line it carries out
(``quick`` reads the window with it, ``quick_add`` adds)."""

from __future__ import annotations

import json
import os
import socket
import sys

from contextls.common.build import build_id
from contextls.common.environment import flag
from contextls_client.names import CLIENT_NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

STORAGE_ENV: Final = "CONTEXTLS_STORAGE"
ALLOW_ANY_FOLDER_ENV: Final = "CONTEXTLS_ALLOW_ANY_FOLDER"
READ_CHUNK: Final = 256 * 1024


class Command:
    """A command line the quick path understood."""

    def __init__(self) -> None:
        self.name = ""
        self.json = False
        self.workspace: str | None = None
        self.format: str | None = None
        self.max_tokens: int | None = None
        self.query: str | None = None
        self.auto = False
        self.targets: list[str] = []
        self.pin = False
        self.force = False


_URI_SAFE: Final = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~/"
)


def uri(path: str) -> str:
    """``file://`` and the path's bytes quoted, as ``Path.asuri()`` writes it."""
    quoted = "".join(chr(b) if b in _URI_SAFE else f"%{b:02X}" for b in os.fsencode(path))
    return f"file://{quoted}"


class Conversation:
    """The daemon's side of one quick session: frames out, messages in (stdlib only)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.shown: list[str] = []
        """What the daemon showed the person (``window/showMessage``), in order."""
        self.evicted: list[dict[str, Any]] = []
        """The items ``contextls/didEvict`` announced, in order."""
        self._buffer = b""

    def send(self, messages: list[tuple[int | None, str, dict[str, Any]]]) -> None:
        self.sock.sendall(b"".join(_frame(i, method, params) for i, method, params in messages))

    def answers(self, waiting: set[int]) -> dict[int, dict[str, Any]]:
        """Read until each request of ``waiting`` is answered."""
        answers: dict[int, dict[str, Any]] = {}
        while len(answers) < len(waiting):
            message = self._next(block=True)
            assert message is not None
            if message.get("id") in waiting and "method" not in message:
                answers[message["id"]] = message
        return answers

    def drain(self) -> None:
        """Take what the daemon wrote with its last answer (its commit's notifications)."""
        self.sock.setblocking(False)
        try:
            while self._next(block=False) is not None:
                pass
        except (BlockingIOError, InterruptedError, OSError, ValueError):
            pass

    def _next(self, block: bool) -> dict[str, Any] | None:
        while True:
            head, separator, rest = self._buffer.partition(b"\r\n\r\n")
            if separator:
                length = next(
                    int(value)
                    for name, _, value in (line.partition(b":") for line in head.split(b"\r\n"))
                    if name.strip().lower() == b"content-length"
                )
                if len(rest) >= length:
                    message: dict[str, Any] = json.loads(rest[:length])
                    self._buffer = rest[length:]
                    self._note(message)
                    return message
            chunk = self.sock.recv(READ_CHUNK)
            if not chunk:
                if block:
                    raise ValueError("the daemon closed the connection")
                return None
            self._buffer += chunk

    def _note(self, message: dict[str, Any]) -> None:
        if "id" in message:
            return
        params = message.get("params") or {}
        if message.get("method") == "window/showMessage":
            text = params.get("message")
            if isinstance(text, str):
                self.shown.append(text)
        elif message.get("method") == "contextls/didEvict":
            self.evicted.extend(params.get("items") or [])


def opening(root: str, database: str) -> list[tuple[int | None, str, dict[str, Any]]]:
    """serverInfo (id 1), initialize (id 2) and initialized, for the folder ``root``."""
    workspace = uri(root)
    name = os.path.basename(root) or workspace
    options: dict[str, Any] = {}
    if os.environ.get(STORAGE_ENV):
        options["storage"] = database
    if flag(ALLOW_ANY_FOLDER_ENV):
        options["allowAnyFolder"] = True
    return [
        (1, "contextls/serverInfo", {}),
        (
            2,
            "initialize",
            {
                "processId": os.getpid(),
                "clientInfo": {"name": CLIENT_NAME},
                "rootUri": workspace,
                "rootPath": root,
                "workspaceFolders": [{"uri": workspace, "name": name}],
                "capabilities": {"workspace": {"workspaceFolders": True}},
                "initializationOptions": options,
            },
        ),
        (None, "initialized", {}),
    ]


def this_daemon(answers: dict[int, dict[str, Any]], database: str) -> bool:
    """Whether the daemon that answered serves ``database`` and runs this code."""
    info = answers.get(1, {}).get("result")
    return (
        isinstance(info, dict)
        and info.get("storage") == database
        and info.get("build") == build_id()
    )


def went_away(error: Exception) -> None:
    """The daemon went away mid-command: the full path starts it again and runs the
    command, as it does when the daemon dies under it; the person hears why."""
    reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    print(f"contextls: the daemon went away ({reason}); starting it again", file=sys.stderr)


def _frame(msg_id: int | None, method: str, params: dict[str, Any]) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if msg_id is not None:
        message["id"] = msg_id
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)
