"""End-to-end fixtures: the real server over stdio, driven by the asyncio ``RpcClient``.

Each test gets its own workspace folder and SQLite file. ``Session`` wraps an
``RpcClient`` of ``tests.support.rpc`` with helpers that return plain dicts
and that record every contextls notification in arrival order. Standard LSP
notifications can be given as lsprotocol types: they are unstructured with
the server's own converter, as an editor's client would send them.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from contextls.lsp.converter import converter_factory
from contextls.protocol import Notification
from tests.support.rpc import TIMEOUT, RpcClient, RpcError

SERVER = [sys.executable, "-m", "contextls", "serve"]


SHOW_MESSAGE = "window/showMessage"
LSP_CONVERTER = converter_factory()


class Session:
    def __init__(self, client: RpcClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.statuses: list[dict[str, Any]] = client.keep(Notification.DID_CHANGE_STATUS)
        self.evictions: list[dict[str, Any]] = client.keep(Notification.DID_EVICT)
        self.shown: list[dict[str, Any]] = client.keep(SHOW_MESSAGE)
        self.warned: list[dict[str, Any]] = client.keep(Notification.DID_WARN)
        """The warnings as data, for a client that declared it takes them."""
        self.stopped = False

    @property
    def messages(self) -> list[str]:
        """What the server showed the person (window/showMessage), in order."""
        return [shown["message"] for shown in self.shown]

    def uri(self, relative: str) -> str:
        return (self.root / relative).as_uri()

    async def call(self, method: str, **params: Any) -> Any:
        return await self.client.call(method, params, TIMEOUT)

    async def raw(self, method: str, params: Any) -> Any:
        return await self.client.call(method, params, TIMEOUT)

    async def error(self, method: str, **params: Any) -> RpcError:
        """The JSON-RPC error a request ends in (fails the test if it succeeds)."""
        return await self.raw_error(method, params)

    async def raw_error(self, method: str, params: Any) -> RpcError:
        try:
            result = await self.raw(method, params)
        except RpcError as error:
            return error
        raise AssertionError(f"{method} succeeded but should have failed: {result!r}")

    def notify(self, method: str, params: Any) -> None:
        """``params``: plain JSON values, or lsprotocol types."""
        self.client.notify(method, LSP_CONVERTER.unstructure(params))

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = TIMEOUT) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while not predicate():
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError("timed out waiting for the server")
            await asyncio.sleep(0.01)

    def region(self, path: str, start: int, end: int) -> dict[str, Any]:
        """Params for lines start..end (1-based, inclusive) of ``path``."""
        return {
            "uri": self.uri(path),
            "range": {
                "start": {"line": start - 1, "character": 0},
                "end": {"line": end, "character": 0},
            },
        }


async def open_session(
    argv: Sequence[str],
    root: Path,
    folders: Sequence[Path],
    options: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    capabilities: dict[str, Any] | None = None,
) -> Session:
    """Start ``argv`` and initialize it as an editor would (the process ends if that fails).

    The server's stderr stays on the test's, where pytest shows it with a failure.
    """
    client = await RpcClient.spawn(argv, stderr=None, env=env, cwd=cwd)
    session = Session(client, root)
    params: dict[str, Any] = {
        "processId": os.getpid(),
        "capabilities": capabilities or {},
        "workspaceFolders": [{"uri": path.as_uri(), "name": path.name} for path in folders],
    }
    if options is not None:
        params["initializationOptions"] = options
    try:
        await client.call("initialize", params, TIMEOUT)
    except BaseException:
        await client.close()
        raise
    client.notify("initialized", {})
    return session


Starter = Callable[..., Awaitable[Session]]


def window_state(status: dict[str, Any]) -> dict[str, Any]:
    """A status without its semantic backlog, which the idle indexer moves on its own."""
    return {key: value for key, value in status.items() if key != "semantic"}


@pytest.fixture
def storage(tmp_path: Path) -> Path:
    return tmp_path / "state" / "contextls.sqlite3"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(
        "".join(f"def f{n}():\n    return {n}\n\n" for n in range(1, 41))
    )
    (root / "README.md").write_text("# Project\n\nA small project for tests.\n")
    return root.resolve()


@pytest.fixture
async def start(workspace: Path, storage: Path) -> AsyncIterator[Starter]:
    """Start a server (as many as a test needs); all are shut down afterwards."""
    sessions: list[Session] = []

    async def starter(
        options: dict[str, Any] | None = None,
        folders: list[Path] | None = None,
        root: Path | None = None,
        capabilities: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
    ) -> Session:
        folder_paths = folders if folders is not None else [root or workspace]
        session = await open_session(
            SERVER,
            root or workspace,
            folder_paths,
            {"storage": str(storage), **(options or {})},
            env=env,
            capabilities=capabilities,
        )
        sessions.append(session)
        return session

    yield starter
    for session in sessions:
        await stop(session)


async def stop(session: Session) -> None:
    """LSP shutdown and exit (which must succeed); the process is ended in any case."""
    if session.stopped:
        return
    session.stopped = True
    try:
        await session.client.shutdown(TIMEOUT)
    finally:
        await session.client.close()


@pytest.fixture
async def session(start: Starter) -> Session:
    return await start()


@pytest.fixture
def env(tmp_path: Path, workspace: Path) -> Iterator[dict[str, str]]:
    """The environment of a daemon of this test's own (stopped at the end)."""
    from .daemon_clients import daemon_env

    yield from daemon_env(tmp_path, workspace)


@pytest.fixture
async def editors(env: dict[str, str], workspace: Path) -> AsyncIterator[list[Session]]:
    """Two editor sessions on that daemon, through ``contextls connect``."""
    from .daemon_clients import editors_on

    async for sessions in editors_on(env, workspace):
        yield sessions
