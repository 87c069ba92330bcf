"""The window's changes, as MCP notifications: one of each kind per change, in both eras.

The daemon pushes ``contextls/didChangeStatus`` after every change to the window,
from any client. Each new revision becomes, once:

- ``notifications/resources/updated`` for the context resource, and for each item
  resource whose item changed or left;
- ``notifications/resources/list_changed`` when the list of item resources changed
  (an item came or went, or its label, size or flags changed).

A handshake-era session (2025-11-25 and before) gets them for what it subscribed to
with ``resources/subscribe`` (``list_changed`` needs no subscription); a 2026-07-28
session gets them on its ``subscriptions/listen`` streams, through the SDK's bus,
which filters by what each stream asked for. Pushes that arrive together make one
round, and a push of a revision already told (every client's session opening pushes
the status as it is) makes none. When the revision cannot be compared (a session
opened on a daemon again, which counts afresh), the window's items are compared
instead, so a daemon's restart is news only if the window differs.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from typing import Final

from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated

from contextls.protocol import ContextItem, ListParams, Requests, StatusParams
from contextls_client.mcp.link import DaemonLink, Unreachable
from contextls_client.mcp.resources import context_uri, item_uri
from contextls_client.messages import ContextlsError, ServerGoneError

GATHER_SECONDS: Final = 0.05
"""How long pushes are gathered into one round of notifications."""

Listing = dict[str, tuple[str, int, bool, bool, str]]
"""Item id -> what its resource entry shows (label, tokens, flags) and its content's digest."""


def listing_of(items: list[ContextItem]) -> Listing:
    return {
        item.id: (
            item.label,
            item.tokens,
            item.pinned,
            item.stale,
            hashlib.blake2b(item.content.encode(), digest_size=8).hexdigest(),
        )
        for item in items
    }


class Changes:
    """Turns the daemon's pushes into resource notifications for this session."""

    def __init__(self, link: DaemonLink, bus: InMemorySubscriptionBus) -> None:
        self.link = link
        self.bus = bus
        self.subscribed: set[str] = set()
        """What a handshake-era client subscribed to."""
        self.session: ServerSession | None = None
        """The handshake-era session to notify (None on 2026-07-28, where the bus does)."""
        self._revision: int | None = None
        self._listing: Listing | None = None
        self._round: asyncio.Task[None] | None = None
        self._untold = False
        self._afresh = False
        """A session opened on a daemon (again): its revisions cannot be compared with the
        last one told, so the window is compared instead."""

    async def prime(self) -> None:
        """Remember the window as it is, so the first change is told against it (and
        the push that opening the session makes is not told as one)."""
        self._listing = await self._current()
        await self._learn_revision()
        self._untold = self._afresh = False

    async def _learn_revision(self) -> None:
        """The window's revision now: pushes up to it are not news."""
        with contextlib.suppress(ContextlsError, ServerGoneError, Unreachable):
            status = await self.link.call(
                Requests.STATUS, StatusParams(workspace=self.link.workspace)
            )
            self._revision = max(self._revision or 0, status.revision)

    def noticed(self, revision: int | None) -> None:
        """The window changed (``revision``), or may have (None: a session on a daemon
        opens, whose revisions start afresh)."""
        if revision is None or self._revision is None:
            self._afresh = True  # nothing to compare the revision with: compare the window
        elif revision <= self._revision:
            return  # already told
        self._revision = revision
        self._untold = True
        if self._round is None or self._round.done():
            self._round = asyncio.get_running_loop().create_task(self._tell())

    async def _tell(self) -> None:
        while self._untold:
            await asyncio.sleep(GATHER_SECONDS)
            if not self._untold:
                return  # primed meanwhile: nothing to tell
            self._untold = False  # what is pushed from here on makes another round
            await self._tell_once()

    async def _tell_once(self) -> None:
        root = self.link.root
        if root is None:
            return
        afresh, self._afresh = self._afresh, False
        if afresh:
            await self._learn_revision()
        listing = await self._current()
        before, self._listing = self._listing, listing
        if afresh and listing is not None and listing == before:
            return  # back on a daemon, and the window is as it was
        updated = [context_uri(root)]
        list_changed = False
        if listing is not None:
            shown_before = {i: entry[:4] for i, entry in (before or {}).items()}
            list_changed = shown_before != {i: entry[:4] for i, entry in listing.items()}
            updated += [
                item_uri(i) for i, entry in (before or {}).items() if listing.get(i) != entry
            ]
        for uri in updated:
            await self.bus.publish(ResourceUpdated(uri=uri))
        if list_changed:
            await self.bus.publish(ResourcesListChanged())
        session = self.session
        if session is None:
            return
        with contextlib.suppress(Exception):  # a host that went away is not the daemon's concern
            for uri in updated:
                if uri in self.subscribed:
                    await session.send_resource_updated(uri)
            if list_changed:
                await session.send_resource_list_changed()

    async def _current(self) -> Listing | None:
        try:
            listed = await self.link.call(Requests.LIST, ListParams(workspace=self.link.workspace))
        except (ContextlsError, ServerGoneError, Unreachable):
            return None
        return listing_of(listed.items)
