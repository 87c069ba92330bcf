"""The cyclic garbage collector held off while a map is made or ranked.

A workspace's code index keeps the facts of every file (CPython's ``Lib/``: ~150,000
objects the collector tracks), and a ranking allocates enough to set off collections of
the oldest generation, each of which walks all of them again: a third of a re-rank
after one change (0.31 -> 0.20 s on ``Lib/``) and a fifth of the graph's first build.
The collector is paused while any ranking runs (they may overlap, one per workspace)
and resumes once none has run for ``RESUME_AFTER`` seconds; what became garbage
meanwhile is collected then. Resuming at once would make the request that follows a
first map wait: the collection due then walks every object the map made (0.14 s).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

RESUME_AFTER: float = 1.0

_lock = threading.Lock()
_holders = 0
_paused = False
"""Whether the collector is off because of ``paused`` (rather than never on)."""
_was_enabled = True
_resuming: threading.Timer | None = None


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection while inside, nor for ``RESUME_AFTER`` seconds after the last
    leaves (reference counting frees as ever)."""
    global _holders, _paused, _was_enabled, _resuming
    with _lock:
        if _resuming is not None:
            _resuming.cancel()
            _resuming = None
        if not _paused:
            _was_enabled, _paused = gc.isenabled(), True
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0:
                _resuming = threading.Timer(RESUME_AFTER, _resume)
                _resuming.daemon = True
                _resuming.start()


def _resume() -> None:
    global _paused, _resuming
    with _lock:
        if _holders or not _paused:
            return
        _paused, _resuming = False, None
        if not _was_enabled:
            return
        gc.enable()
    gc.collect()


def is_paused() -> bool:
    """Whether ``paused`` holds the collector off now."""
    return _paused
