"""When the archive's search index catches up: once the server has been idle a while.

Evicted rows are queued for the FTS5 index rather than indexed as they are
archived (indexing one row costs more than the rest of an eviction). After a
commit, this waits until no request came for ``IDLE`` seconds and then
indexes in batches, one per loop turn; a search indexes what is left first.

Why a timer this far away: measured on these VMs, while an asyncio timer a
few milliseconds away is pending, every request's round trip grows by ~40 µs
(the loop waits in epoll with a short timeout, and waking from that wait is
slow); timers 20 ms or more away cost nothing measurable.
"""

from __future__ import annotations

import time
from collections.abc import Callable

IDLE = 0.05
"""Seconds without a request before the archive's search index catches up."""

Later = Callable[[float, Callable[[], None]], None]
"""Run a callback after a delay (the event loop's ``call_later``)."""


class IdleIndexing:
    def __init__(self, later: Later, index_some: Callable[[], bool | None]) -> None:
        """``index_some`` indexes a batch: True if more wait, False if done, None if busy."""
        self._later = later
        self._index_some = index_some
        self._last_request = 0.0
        self._armed = False

    def request(self) -> None:
        """A request came: indexing waits until the server is idle again."""
        self._last_request = time.monotonic()

    def idle(self) -> bool:
        """No request for ``IDLE`` seconds (background work checks it between steps)."""
        return time.monotonic() - self._last_request >= IDLE

    def committed(self) -> None:
        """Something was committed (maybe evictions): index once idle."""
        if not self._armed:
            self._armed = True
            self._later(IDLE, self._run)

    def _run(self) -> None:
        self._armed = False
        if time.monotonic() - self._last_request < IDLE:
            more: bool | None = None  # not idle yet
        else:
            more = self._index_some()
        if more is not False:
            self._armed = True
            self._later(IDLE if more is None else 0, self._run)
