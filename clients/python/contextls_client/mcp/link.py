"""The MCP server's session on the user's daemon, kept alive across daemon restarts.

The daemon is reached (or started) in a thread as soon as ``initialize`` is answered,
while the SDK loads, exactly as the CLI reaches it (``session.current_daemon``: the
daemon of this database, restarted when it runs other code). The LSP session itself
opens once the workspace is known (``--workspace``, the host's roots, or the current
directory).

When the daemon goes away (stopped, killed, restarted by another client), a request
reaches or starts it again and is retried once, as a CLI command is. Meanwhile the
link waits for a daemon to listen again (it does not start one: someone stopped it),
so the changes others make reach the agent's subscriptions without a call first.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Final, TypeVar

from contextls.common.places import log_path
from contextls.protocol import (
    AGENT_CLIENTS,
    Notification,
    Request,
    ServerInfo,
    Status,
    Wire,
)
from contextls_client.console import Console
from contextls_client.daemon import DaemonError, connect, daemon_socket
from contextls_client.lsp_client import ContextlsClient
from contextls_client.messages import ContextlsError, ReceivedNotification, ServerGoneError
from contextls_client.session import Place, current_daemon
from contextls_client.socket_client import DaemonClient

P = TypeVar("P", bound=Wire)
R = TypeVar("R", bound=Wire)

LISTEN_AGAIN_EVERY: Final = 1.0
"""Seconds between looks for a daemon listening again after the link lost it."""


class Unreachable(Exception):
    """The daemon cannot be reached or started, or went away twice; the message says why."""


MCP_CLIENT: Final = AGENT_CLIENTS[0]
"""The name the server knows this client by: it acts for an agent (``AGENT_CLIENTS``)."""


def reach(place: Place) -> DaemonClient:
    """Reach the daemon of ``place``'s database (starting or restarting it), in a thread:
    the connection the session then goes on on."""
    return current_daemon(place, Console(json_mode=False), client_name=MCP_CLIENT, session=False)


class DaemonLink:
    """One LSP session on the daemon, for the workspace it is bound to."""

    def __init__(self, place: Place) -> None:
        """Starts reaching the daemon, in a thread."""
        self.place = place
        self.root: Path | None = None
        self.info: ServerInfo | None = None
        self.on_change: Callable[[int | None], None] = lambda revision: None
        """Called with the window's revision after each change (None: it may have changed)."""
        self._client: ContextlsClient | None = None
        self._lock = asyncio.Lock()
        self._listening: asyncio.Task[None] | None = None
        self._closing = False
        self._threads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="contextls-reach")
        self._reached: Future[DaemonClient] | None = self._threads.submit(reach, place)

    @property
    def workspace(self) -> str:
        """The ``workspace`` of every request: the bound root's URI."""
        assert self.root is not None, "bind a workspace first"
        return self.root.as_uri()

    def bind(self, root: Path) -> None:
        self.root = root

    async def call(self, request: Request[P, R], params: P) -> R:
        """One request; if the daemon went away, reach or start it again and retry once."""
        try:
            return await (await self._session()).call(request, params)
        except ServerGoneError as gone:
            await self._drop()
            first = gone.reason
        try:
            return await (await self._session()).call(request, params)
        except ServerGoneError as again:
            await self._drop()
            raise Unreachable(
                f"the contextls daemon went away ({first}), and again when reached anew "
                f"({again.reason}); see {log_path(self.place.storage)}"
            ) from again

    async def close(self) -> None:
        self._closing = True
        if self._listening is not None:
            self._listening.cancel()
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(ServerGoneError, ContextlsError, OSError):
                await client.shutdown()
        self._threads.shutdown(wait=False, cancel_futures=True)

    async def _session(self) -> ContextlsClient:
        async with self._lock:
            client = self._client
            if client is None:
                client = self._client = await self._open()
            return client

    async def _open(self) -> ContextlsClient:
        assert self.root is not None, "bind a workspace first"
        loop = asyncio.get_running_loop()
        # The first session uses the daemon reached at start; a later one (the daemon went
        # away) reaches it, or starts it, again.
        reached, self._reached = self._reached, None
        try:
            daemon = await asyncio.wrap_future(reached or self._threads.submit(reach, self.place))
        except DaemonError as error:
            raise Unreachable(str(error)) from error
        # One connection: the one that reached the daemon and asked what it runs.
        client = ContextlsClient(
            socket=daemon_socket(self.place.storage),
            on_gone=lambda gone: loop.call_soon_threadsafe(lambda: self._lost(client)),
            connected=daemon.detach(),
            connection=daemon.rpc,
        )
        await client.start()
        self.info = daemon.server_info
        client.on_notification(self._notified)
        self.on_change(None)  # another daemon counts revisions afresh; the window may differ
        await client.initialize(self.root, self.place.initialization_options())
        return client

    def _notified(self, note: ReceivedNotification) -> None:
        if note.method == Notification.DID_CHANGE_STATUS:
            status = note.decode(Status)
            if self.root is not None and status.workspace.rstrip("/") == self.workspace:
                self.on_change(status.revision)

    async def _drop(self) -> None:
        async with self._lock:
            client, self._client = self._client, None
        if client is not None:
            await client.close()

    def _lost(self, client: ContextlsClient) -> None:
        """The daemon went away under the session: listen for one to come back."""
        if self._closing or client is not self._client:
            return  # closed on purpose, or already replaced
        self._client = None
        if self._listening is None or self._listening.done():
            self._listening = asyncio.get_running_loop().create_task(self._listen_again())

    async def _listen_again(self) -> None:
        path = daemon_socket(self.place.storage)
        while not self._closing:
            await asyncio.sleep(LISTEN_AGAIN_EVERY)
            if self._client is not None:
                return  # a call reached (or started) it first
            sock = await asyncio.to_thread(connect, path)
            if sock is None:
                continue
            sock.close()
            with contextlib.suppress(Unreachable, ServerGoneError, ContextlsError, OSError):
                await self._session()
                return
