"""Processes for the work that would hold everyone's requests: parsing and tagging code.

One daemon answers every editor, command line and agent of a user on one event loop, so
work measured in seconds (tagging a repository of thousands of files for its map)
runs here, in worker processes, while the loop answers others. Processes, not threads:
tree-sitter's query matching and the tagging around it hold the GIL, and a native
library that crashes or loops on hostile input takes a worker down, not the daemon.

Each job has a budget in seconds; a job over it, or a worker that dies, restarts the
pool and raises ``OverBudget``: the caller reads the files of that job one by one, and
a file over the budget alone is read as lines, with the reason said.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Final, ParamSpec, TypeVar

from contextls.common.processes import process_pool, usable_cores

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

PROCESSES: Final = 2
"""Workers: the machines people run editors on have at least two cores."""
MAP_PROCESSES_MOST: Final = 4
"""Workers for the maps' parsing on a machine of many cores (each ~45 MB): past four,
the maps' own process (decoding what they send, the graph) is what a first map waits
for."""


def for_maps(cores: int | None = None) -> int:
    """Workers for the maps' parsing: half the cores this process may use (the other half
    stays for the editors, the daemon's loop and its other work), at least ``PROCESSES``,
    at most ``MAP_PROCESSES_MOST``. A first map's parse is most of its time, and a
    machine of eight cores parses a repository twice as fast with four."""
    usable = usable_cores() if cores is None else cores
    return max(PROCESSES, min(MAP_PROCESSES_MOST, usable // 2))


def imported(module: str) -> None:
    """A worker's first job: import what the next jobs need."""
    importlib.import_module(module)


class OverBudget(Exception):
    """A job took longer than its budget, or its worker died under it."""


class Workers:
    def __init__(self, processes: int = PROCESSES) -> None:
        self.processes = max(1, min(processes, usable_cores()))
        self._pool: ProcessPoolExecutor | None = None
        self.restarts = 0
        """How often a job over its budget (or a crash) cost the pool its workers."""

    def _running(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = process_pool(self.processes)
        return self._pool

    def warm(self, module: str) -> None:
        """Start every worker now, each importing ``module`` (whose jobs come next), so
        that the first jobs do not wait for processes to start one after the other."""
        pool = self._running()
        for _ in range(self.processes):
            pool.submit(imported, module)

    async def run(self, budget: float, job: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``job(*args)`` in a worker; OverBudget past ``budget`` seconds or on a crash.
        Cancelling the caller leaves the job to finish in its worker (a process cannot
        be interrupted without losing it), its answer unread."""
        if kwargs:
            raise TypeError("worker jobs take positional arguments")
        # Here, not at the top: each worker imports this module (its first job,
        # ``imported``) and never runs an event loop.
        import asyncio

        loop = asyncio.get_running_loop()
        try:
            future = loop.run_in_executor(self._running(), job, *args)
        except BrokenProcessPool:
            self._restart()
            future = loop.run_in_executor(self._running(), job, *args)
        try:
            return await asyncio.wait_for(future, budget)
        except TimeoutError as error:
            log.warning("%s took more than %.0f s: restarting the workers", job.__name__, budget)
            self._restart()
            raise OverBudget(f"it took more than {budget:.0f} s") from error
        except BrokenProcessPool as error:
            log.warning("a worker died in %s: restarting the workers", job.__name__)
            self._restart()
            raise OverBudget("the parser crashed on it") from error

    def _restart(self) -> None:
        pool, self._pool = self._pool, None
        self.restarts += 1
        if pool is None:
            return
        for process in list(getattr(pool, "_processes", {}).values()):
            process.kill()  # a job over its budget would run on; nobody reads its answer
        pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            for process in list(getattr(pool, "_processes", {}).values()):
                process.kill()
            pool.shutdown(wait=False, cancel_futures=True)
