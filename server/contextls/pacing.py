"""When the service commits a burst of requests, and when the search index catches up.

The service holds the store's write lock for a burst of requests and commits
what they changed together (see ``service``). A burst ends

* right after the answers of a request that finds it ``COMMIT_DELAY`` old
  (the client already has its answer; the commit overlaps its next turn), or
* ``SETTLE`` after it began, when no request came to end it.

Why not one short timer per burst: measured on these VMs, while an asyncio
timer a few milliseconds away is pending, every request's round trip grows by
~40 µs (the loop waits in epoll with a short timeout, and waking from that wait
is slow); timers 20 ms or more away cost nothing measurable.

Archived rows wait for the search index until the server has been ``IDLE``
for a while (searches index what is left first).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

COMMIT_DELAY = 0.005
"""Seconds a busy burst lasts before it is committed."""

SETTLE = 0.025
"""Seconds after which a quiet burst is committed."""

IDLE = 0.05
"""Seconds without a request before the archive's search index catches up."""


class Timing(Protocol):
    """The event loop, as the service needs it."""

    def later(self, delay: float, callback: Callable[[], None]) -> None: ...

    def after_answers(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the answers queued so far are written."""
        ...


class Pacer:
    def __init__(
        self,
        timing: Timing,
        commit: Callable[[], None],
        index_some: Callable[[], bool | None],
    ) -> None:
        """``index_some`` indexes a batch: True if more wait, False if done, None if busy."""
        self._timing = timing
        self._commit = commit
        self._index_some = index_some
        self._burst_began = 0.0
        self._last_request = 0.0
        self._settle_armed = False
        self._check_armed = False
        self._index_armed = False

    def request(self, began_burst: bool) -> None:
        """A request works under the lock (and opened the burst if ``began_burst``)."""
        now = time.monotonic()
        self._last_request = now
        if began_burst:
            self._burst_began = now
            if not self._settle_armed:
                self._settle_armed = True
                self._timing.later(SETTLE, self._settle)
        if not self._check_armed:
            self._check_armed = True
            self._timing.after_answers(self._check)

    def committed(self) -> None:
        if not self._index_armed:
            self._index_armed = True
            self._timing.later(IDLE, self._index)

    def _check(self) -> None:
        self._check_armed = False
        if time.monotonic() - self._burst_began >= COMMIT_DELAY:
            self._commit()

    def _settle(self) -> None:
        self._settle_armed = False
        self._commit()  # nothing happens if the burst was committed already

    def _index(self) -> None:
        self._index_armed = False
        if time.monotonic() - self._last_request < IDLE:
            more: bool | None = None  # not idle yet
        else:
            more = self._index_some()
        if more is not False:
            self._index_armed = True
            self._timing.later(IDLE if more is None else 0, self._index)
