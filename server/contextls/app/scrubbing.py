"""Forgotten text scrubbed out of the database's files after the commit that forgot it.

The scrub rewrites the file (``VACUUM``) and truncates the WAL: on a large archive it
takes about as long as the forget's own writes. A forget through the event loop commits
its deletes in one turn and is answered at a later one, after the scrub, so the clients
whose requests came meanwhile are answered between the two (``held``); elsewhere the
commit that forgot scrubs at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from contextls.search.meaning import meaning_for
from contextls.storage.store import Store

log = logging.getLogger(__name__)


class Scrubbing:
    def __init__(self, store: Callable[[], Store | None], warn: Callable[[str], None]) -> None:
        self._store = store
        self._warn = warn
        self._holders = 0

    @contextmanager
    def held(self) -> Iterator[None]:
        """Commits made meanwhile leave the scrub to the first commit after it."""
        self._holders += 1
        try:
            yield
        finally:
            self._holders -= 1

    def after_commit(self) -> None:
        """A commit landed (or there was nothing to commit): scrub what it forgot, unless
        a forget holds the scrub for a turn of its own."""
        if not self._holders:
            self.scrub()

    def scrub(self) -> None:
        """Items were forgotten: no copy of their text may stay in the files."""
        store = self._store()
        if store is None or not store.needs_scrub:
            return
        try:
            meaning_for(store.location).forgotten()  # their vectors first
            store.retention.scrub()
        except Exception as error:
            log.exception("scrubbing forgotten items out of %s failed", store.location)
            self._warn(
                f"forgotten items are deleted, but their text may remain in free space of "
                f"{store.location} until the next forget ({error})"
            )
