"""The window's changes, as MCP notifications: one of each kind per change, in both eras.

The daemon pushes ``contextls/didChangeStatus`` after every change to the window,
from any client, and also when any client's session opens or the archive's search
index moves on. Each push of a new revision is checked against the window's items
(their order, text, labels, sizes and flags), and only a difference is told, once:

- ``notifications/resources/updated`` for the context resource, and for each item
  resource whose item changed or left;
- ``notifications/resources/list_changed`` when what the list of item resources
  shows changed (an item came or went, or its label, size or flags changed).

A handshake-era session (2025-11-25 and before) gets them for what it subscribed to
with ``resources/subscribe`` (``list_changed`` needs no subscription); a 2026-07-28
session gets them on its ``subscriptions/listen`` streams, through the SDK's bus,
which filters by what each stream asked for. Pushes that arrive together make one
round; a revision already seen makes none (a daemon started again counts afresh, so
then every push is checked until the revision is learnt again).
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

Entry = tuple[str, str, int, bool, bool, str]
"""An item as its resource shows it (id, label, tokens, pinned, stale) and its text's digest."""
Listing = tuple[Entry, ...]


def listing_of(items: list[ContextItem]) -> Listing:
    return tuple(
        (
            item.id,
            item.label,
            item.tokens,
            item.pinned,
            item.stale,
            hashlib.blake2b(item.content.encode(), digest_size=8).hexdigest(),
        )
        for item in items
    )


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

    async def prime(self) -> None:
        """Remember the window as it is, so the first change is told against it (and
        the push that opening the session makes is not told as one)."""
        self._listing = await self._current()
        await self._learn_revision()
        self._untold = False

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
        if revision is not None and self._revision is not None and revision <= self._revision:
            return  # already seen
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
        if self._revision is None:
            await self._learn_revision()
        listing = await self._current()
        if listing is None or listing == self._listing:
            return  # the daemon cannot say, or the items are as they were
        before, self._listing = self._listing or (), listing
        now = {entry[0]: entry for entry in listing}
        updated = [context_uri(root)]
        updated += [item_uri(entry[0]) for entry in before if now.get(entry[0]) != entry]
        list_changed = [entry[:5] for entry in before] != [entry[:5] for entry in listing]
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
