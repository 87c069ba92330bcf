"""The clients of one process: who hears of committed changes, and whose buffers count.

The service announces each committed change once; the hub passes it to every
connected client that has that workspace folder open (one in ``serve
--stdio``, many in the daemon), so every status bar moves at once.
"""

from __future__ import annotations

import time
from typing import Protocol
from urllib.parse import unquote

from contextls.app.session import Session, normalize_uri
from contextls.protocol import ContextItem, DidWarnParams, EvictionReason, Status

UNHEARD_KEPT = 10
"""Warnings kept for the next client while none is connected."""


class Client(Protocol):
    """One connection, as the hub sees it (``server.Client``)."""

    session: Session

    def status_changed(self, status: Status) -> None: ...

    def evicted(self, workspace: str, items: list[ContextItem], reason: EvictionReason) -> None: ...

    def document_text(self, uri: str) -> str | None: ...

    def warn(self, message: str | DidWarnParams) -> None: ...


def _named(server: Client) -> str:
    return server.session.client or "another editor"


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
        self._unheard: list[str | DidWarnParams] = []
        self._owners: dict[str, Client] = {}
        """Per document URI, the editor that changed it last (or opened it first): two
        editors with different unsaved text of one file, windows follow this one's."""
        self._told: dict[str, set[Client]] = {}
        """Per document URI, the editors told that their text and the followed one differ."""

    def join(self, server: Client) -> None:
        self.servers.append(server)

    def leave(self, server: Client) -> None:
        if server in self.servers:
            self.servers.remove(server)
        for uri in [uri for uri, owner in self._owners.items() if owner is server]:
            del self._owners[uri]
        for told in self._told.values():
            told.discard(server)

    # --- who owns a document two editors have open

    def edited(self, server: Client, uri: str) -> None:
        """``server`` changed ``uri``: its text is the one windows follow now. Every other
        editor whose own text of it differs is told so (once, until the owner changes), and
        so is the owner: windows never follow one editor's text while another's silently
        differs."""
        key = unquote(uri)
        if self._owners.get(key) is not server:
            self._owners[key] = server
            self._told[key] = set()
        self._tell(key, uri, server)

    def opened(self, server: Client, uri: str) -> None:
        """``server`` opened ``uri``: opening changes nothing, so an editor that owns it
        keeps it (both are told when their texts differ); else ``server`` owns it."""
        key = unquote(uri)
        owner = self._owners.get(key)
        if owner is None or owner not in self.servers or owner.document_text(uri) is None:
            self._owners[key] = server
            self._told[key] = set()
            owner = server
        self._tell(key, uri, owner)

    def _tell(self, key: str, uri: str, owner: Client) -> None:
        """Tell the editors whose text of ``uri`` differs from ``owner``'s, once each until the
        owner changes; an editor told is not compared again (no text is copied per keystroke)."""
        told = self._told.setdefault(key, set())
        name = key.rsplit("/", 1)[-1]
        mine: str | None = None
        newly = []
        for other in self.servers:
            if other is owner or other in told:
                continue
            theirs = other.document_text(uri)
            if theirs is None:
                continue
            if mine is None:
                mine = owner.document_text(uri)
                if mine is None:
                    return
            if theirs == mine:
                continue
            told.add(other)
            newly.append(other)
            other.warn(
                f"{name} has other unsaved text in {_named(owner)}, which changed it last: "
                "the window follows that text (its items' lines and stale marks); change "
                f"{name} here to make this editor's text the one it follows"
            )
        if newly and owner not in told:
            told.add(owner)
            owner.warn(
                f"{name} has other unsaved text in {', '.join(_named(o) for o in newly)}: the "
                "window follows the text here, since this editor changed it last"
            )

    def closed(self, server: Client, uri: str) -> None:
        """``server`` closed ``uri``: another editor that has it open owns it, if any."""
        key = unquote(uri)
        if self._owners.get(key) is server:
            del self._owners[key]
            self._told.pop(key, None)

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
        """The text of ``uri`` in the editor that changed it last (``edited``), else in the
        first editor that has it open, else None."""
        owner = self._owners.get(unquote(uri))
        if owner is not None:
            text = owner.document_text(uri)
            if text is not None:
                return text
        for server in self.servers:
            text = server.document_text(uri)
            if text is not None:
                return text
        return None

    def warn(self, message: str | DidWarnParams) -> None:
        """Trouble every client should hear of (the database). Said while no client is
        connected (a daemon opening its database), it waits for the next one."""
        if not self.servers:
            self._unheard = [*self._unheard[-(UNHEARD_KEPT - 1) :], message]
        for server in self.servers:
            server.warn(message)

    def unheard(self) -> list[str | DidWarnParams]:
        """What was said while nobody listened (each told once)."""
        said, self._unheard = self._unheard, []
        return said
