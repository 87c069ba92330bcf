"""End-to-end fixtures: the real server over stdio, driven by pytest-lsp's client.

Each test gets its own workspace folder and SQLite file. ``Session`` wraps a
pytest-lsp ``LanguageClient`` with helpers that return plain dicts (the
client uses the server's converter, so custom results are not namedtuples)
and that record every contextls notification in arrival order.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features

from contextls.lsp.converter import converter_factory
from contextls.protocol import Notification

SERVER = [sys.executable, "-m", "contextls", "serve"]
TIMEOUT = 20.0


class Session:
    def __init__(self, client: LanguageClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.statuses: list[dict[str, Any]] = []
        self.evictions: list[dict[str, Any]] = []

    @property
    def messages(self) -> list[str]:
        return [message.message for message in self.client.messages]

    def uri(self, relative: str) -> str:
        return (self.root / relative).as_uri()

    async def call(self, method: str, **params: Any) -> Any:
        return await asyncio.wait_for(
            self.client.protocol.send_request_async(method, params), TIMEOUT
        )

    async def raw(self, method: str, params: Any) -> Any:
        return await asyncio.wait_for(
            self.client.protocol.send_request_async(method, params), TIMEOUT
        )

    async def error(self, method: str, **params: Any) -> JsonRpcException:
        """The JSON-RPC error a request ends in (fails the test if it succeeds)."""
        return await self.raw_error(method, params)

    async def raw_error(self, method: str, params: Any) -> JsonRpcException:
        try:
            result = await self.raw(method, params)
        except JsonRpcException as error:
            return error
        raise AssertionError(f"{method} succeeded but should have failed: {result!r}")

    def notify(self, method: str, params: Any) -> None:
        self.client.protocol.notify(method, params)

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


def make_client(session_box: list[Session]) -> LanguageClient:
    client = LanguageClient(converter_factory=converter_factory)
    register_lsp_features(client)

    @client.feature(Notification.DID_CHANGE_STATUS)
    def on_status(params: Any) -> None:
        session_box[0].statuses.append(params)

    @client.feature(Notification.DID_EVICT)
    def on_evict(params: Any) -> None:
        session_box[0].evictions.append(params)

    return client


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
    ) -> Session:
        box: list[Session] = []
        client = make_client(box)
        session = Session(client, root or workspace)
        box.append(session)
        await client.start_io(*SERVER)
        init_options = {"storage": str(storage), **(options or {})}
        folder_paths = folders if folders is not None else [root or workspace]
        await asyncio.wait_for(
            client.initialize_session(
                lsp.InitializeParams(
                    capabilities=lsp.ClientCapabilities(),
                    workspace_folders=[
                        lsp.WorkspaceFolder(uri=path.as_uri(), name=path.name)
                        for path in folder_paths
                    ],
                    initialization_options=init_options,
                )
            ),
            TIMEOUT,
        )
        sessions.append(session)
        return session

    yield starter
    for session in sessions:
        await stop(session)


async def stop(session: Session) -> None:
    client = session.client
    if client.capabilities is None:
        return
    try:
        await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
    finally:
        await client.stop()
    client.capabilities = None


@pytest.fixture
async def session(start: Starter) -> Session:
    return await start()
