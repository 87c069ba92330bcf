"""The clients of one process: who hears of committed changes, and whose buffers count.

The service announces each committed change once; the hub passes it to every
connected client that has that workspace folder open (one in ``serve
--stdio``, many in the daemon), so every status bar moves at once.
"""

from __future__ import annotations

import time
from typing import Protocol

from contextls.app.session import Session, normalize_uri
from contextls.protocol import ContextItem, EvictionReason, Status

UNHEARD_KEPT = 10
"""Warnings kept for the next client while none is connected."""


class Client(Protocol):
    """One connection, as the hub sees it (``server.Client``)."""

    session: Session

    def status_changed(self, status: Status) -> None: ...

    def evicted(self, workspace: str, items: list[ContextItem], reason: EvictionReason) -> None: ...

    def document_text(self, uri: str) -> str | None: ...

    def warn(self, message: str) -> None: ...


class Hub:
    def __init__(self, idle_timeout: float | None = None) -> None:
        self.servers: list[Client] = []
        self.daemon = idle_timeout is not None
        """Many clients share this process (``contextls daemon``)."""
        self.idle_timeout = idle_timeout
        self.started_at = time.time_ns() // 1_000_000
        self.socket = ""
        """Where the daemon listens (empty for a server of one client)."""
        self.log = ""
        """The daemon's log file (empty when it logs to stderr)."""
        self._unheard: list[str] = []

    def join(self, server: Client) -> None:
        self.servers.append(server)

    def leave(self, server: Client) -> None:
        if server in self.servers:
            self.servers.remove(server)

    def _showing(self, workspace: str) -> list[Client]:
        key = normalize_uri(workspace)
        return [server for server in self.servers if key in server.session.folders]

    # --- the service's Listener

    def status_changed(self, status: Status) -> None:
        for server in self._showing(status.workspace):
            server.status_changed(status)

    def evicted(self, workspace: str, items: list[ContextItem], reason: EvictionReason) -> None:
        for server in self._showing(workspace):
            server.evicted(workspace, items, reason)

    # --- what the service asks of the editors

    def documents(self, uri: str) -> str | None:
        """The text of ``uri`` in the first editor that has it open, else None."""
        for server in self.servers:
            text = server.document_text(uri)
            if text is not None:
                return text
        return None

    def warn(self, message: str) -> None:
        """Trouble every client should hear of (the database). Said while no client is
        connected (a daemon opening its database), it waits for the next one."""
        if not self.servers:
            self._unheard = [*self._unheard[-(UNHEARD_KEPT - 1) :], message]
        for server in self.servers:
            server.warn(message)

    def unheard(self) -> list[str]:
        """What was said while nobody listened (each told once)."""
        said, self._unheard = self._unheard, []
        return said
