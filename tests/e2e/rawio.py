"""The real server over raw stdio, for what an LSP library hides.

``RawStdio`` is the blocking ``RpcClient`` of ``tests.support.rpc`` started
on ``python -m contextls serve`` and initialized: a test can write many
frames in one ``write``, see every message in arrival order (responses and
notifications interleaved), wait with a timeout instead of hanging when an
answer never comes, signal the process, and read until it closes its output.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path
from typing import IO, Any

from tests.support.rpc import RpcClient, notification

from .conftest import SERVER


class RawStdio(RpcClient):
    """One ``python -m contextls serve`` process, initialized for ``root`` on ``storage``."""

    @classmethod
    def open(
        cls,
        root: Path,
        storage: Path,
        options: dict[str, Any] | None = None,
        log: Path | None = None,
        env: dict[str, str | None] | None = None,
    ) -> RawStdio:
        """``log``: a file the server's stderr is appended to; ``env``: variables to
        set for the server (None removes one)."""
        environment = dict(os.environ)
        for name, value in (env or {}).items():
            if value is None:
                environment.pop(name, None)
            else:
                environment[name] = value
        with contextlib.ExitStack() as stack:
            stderr: IO[bytes] | int = (
                stack.enter_context(log.open("ab")) if log is not None else subprocess.DEVNULL
            )
            server = cls.start(SERVER, stderr=stderr, env=environment)  # the child keeps its own
        reply = server.request(
            "initialize",
            {
                "processId": os.getpid(),
                "capabilities": {},
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "initializationOptions": {"storage": str(storage), **(options or {})},
            },
        )
        assert "result" in reply, reply
        server.send(notification("initialized", {}))
        return server

    def warm_up(self) -> None:
        """Load the tokenizer without touching the store.

        The first change otherwise spends a fraction of a second loading the
        encoding, which would blur what a test times or races against.
        """
        self.result("contextls/countTokens", {"text": "warm up"})


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
        server = RawStdio.open(self.root, self.storage, options, self.log, env)
        self.started.append(server)
        return server

    def close_all(self) -> None:
        for server in self.started:
            server.kill()
