"""Large texts counted in Claude's tokens in a process of their own.

Claude's counter applies its text rules in Python (``core.claude``): ``re.sub`` over a
whole text holds the GIL for up to 45 ms a call on 1 MiB, and the rules between them
hold it in 1 ms turns, so while one client counts a large text every other client's
request waits at each turn (an ``addText`` beside a count of 1 MiB: 35-139 ms at p99,
against 0.6 ms idle). A text of ``OFF_PROCESS_CHARS`` or more is counted by the same
code in one worker process, started on the first such text and kept; the thread that
asked waits without the GIL. Should the process fail, the text is counted here: the
count is the same either way.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Final

from contextls.common.processes import process_pool

if TYPE_CHECKING:
    from contextls.core.claude.counting import ClaudeCounter

log = logging.getLogger(__name__)

OFF_PROCESS_CHARS: Final = 256 * 1024
"""From this length on a text is counted in the worker: the rules take ~0.3 s there,
more than the text's trip and the worker's answer (a few milliseconds)."""

_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()
_counters: dict[str, ClaudeCounter] = {}
"""The worker's loaded counters, by family."""


def count_in_worker(family: str, text: str) -> int:
    """The worker's job: ``text`` counted in ``family``'s tokens."""
    counter = _counters.get(family)
    if counter is None:
        from contextls.core.claude.counting import ClaudeCounter

        counter = _counters[family] = ClaudeCounter(family)
    return counter.count(text)


class OffProcessCounter:
    """A Claude counter that counts a large text in the worker process."""

    additive = False

    def __init__(self, family: str, here: ClaudeCounter) -> None:
        self.family = family
        self.here = here

    def count(self, text: str) -> int:
        if len(text) < OFF_PROCESS_CHARS:
            return self.here.count(text)
        try:
            return _running().submit(count_in_worker, self.family, text).result()
        except (BrokenProcessPool, OSError, RuntimeError) as error:
            log.warning("counting in the worker failed (%s): counting here", error)
            close()  # the next large text starts a worker anew
            return self.here.count(text)


def _running() -> ProcessPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = process_pool(1)
        return _pool


def close() -> None:
    """Stop the worker (the daemon's end, or a worker that failed): a count under way
    there is not waited for."""
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is None:
        return
    for process in list(getattr(pool, "_processes", {}).values()):
        process.kill()
    pool.shutdown(wait=False, cancel_futures=True)
