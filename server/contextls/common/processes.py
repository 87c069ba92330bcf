"""Worker processes that end with the process that started them.

The daemon and the maps' process hand work that would hold everyone's requests, or
that a native library may crash on, to processes of their own: parsing, Claude's
counting of large texts, the embedding model.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Final

PARENT_CHECK_SECONDS: Final = 1.0
"""How often a worker looks whether the process that started it is still there."""


def leave_with_parent(parent: int) -> None:
    """A worker's first act: end when the process that started it is gone. A parent
    killed outright cannot stop its workers, and they would wait for jobs forever."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="parent watch", daemon=True).start()


def usable_cores() -> int:
    """The cores this process may run on (its affinity, where the system says it: a
    container or ``taskset`` may give it fewer than the machine has)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def process_pool(processes: int) -> ProcessPoolExecutor:
    """Worker processes that end with the process that starts them. Spawned: the daemon
    has threads (the embedding worker), and fork would copy their locks mid-use."""
    return ProcessPoolExecutor(
        processes,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=leave_with_parent,
        initargs=(os.getpid(),),
    )
