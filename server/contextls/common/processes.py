"""Worker processes that end with the process that started them.

The daemon and the maps' process hand work that would hold everyone's requests, or
that a native library may crash on, to processes of their own: parsing, Claude's
counting of large texts, the embedding model.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
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


def usable_cores(
    cgroups: Path = Path("/sys/fs/cgroup"), own: Path = Path("/proc/self/cgroup")
) -> int:
    """The cores this process may use: those it may run on (its affinity: ``taskset``, a
    container's cpuset), no more than its control group's CPU quota allows (a container
    started with ``--cpus 2`` on a machine of 64 cores may run anywhere, two at a time)."""
    if hasattr(os, "sched_getaffinity"):
        cores = max(1, len(os.sched_getaffinity(0)))
    else:
        cores = os.cpu_count() or 1
    quota = cpu_quota(cgroups, own)
    return cores if quota is None else max(1, min(cores, math.ceil(quota)))


def cpu_quota(cgroups: Path, own: Path) -> float | None:
    """The CPUs this process's control group may use at once (quota over period), or
    None when it has no quota (or the system does not say: not Linux, no cgroup file)."""
    try:
        lines = own.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        group = path.lstrip("/")
        try:
            if controllers == "":  # cgroup v2: "max 100000" or "200000 100000"
                quota, period = (cgroups / group / "cpu.max").read_text().split()
            elif "cpu" in controllers.split(","):  # cgroup v1, in the cpu controller's tree
                folder = cgroups / "cpu" / group
                quota = (folder / "cpu.cfs_quota_us").read_text().strip()
                period = (folder / "cpu.cfs_period_us").read_text().strip()
            else:
                continue
        except (OSError, ValueError):
            continue
        try:
            if quota not in ("max", "-1") and float(period) > 0:
                return float(quota) / float(period)
        except ValueError:
            continue
    return None


def process_pool(processes: int) -> ProcessPoolExecutor:
    """Worker processes that end with the process that starts them. Spawned: the daemon
    has threads (the embedding worker), and fork would copy their locks mid-use."""
    return ProcessPoolExecutor(
        processes,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=leave_with_parent,
        initargs=(os.getpid(),),
    )
