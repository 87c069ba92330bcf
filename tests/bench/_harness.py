"""Shared plumbing: start the servers under test, interleave rounds, read RSS, CLI.

Every bench starts the real server (``python -m contextls serve``) and its
floor in the same run and alternates between them round by round, so a noisy
neighbour on this shared 2-core machine hits both sides alike.

``CONTEXTLS_BENCH_SERVER`` overrides the server command (shell-split), e.g. to
bench an installed build or to debug a bench against ``echo_server.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from _client import RpcClient
from _stats import Row, print_rows

BENCH_DIR = Path(__file__).resolve().parent
BLOCK = 20
"""Requests per turn when a server and its floor take turns (see ``alternating``)."""
T = TypeVar("T")
K = TypeVar("K")


@dataclass(frozen=True)
class Config:
    quick: bool = False
    fill: str = "store"
    """How bench 5 fills its archive: ``store`` (the server's store API) or ``lsp``."""
    placement: str = "free"
    """Which CPUs the bench and the servers run on (see ``PLACEMENTS``)."""

    def pick(self, full: int, quick: int) -> int:
        return quick if self.quick else full


# -- placement -------------------------------------------------------------

PLACEMENTS = {
    "free": "the scheduler places every process (the default, and what the figures quote)",
    "split": "the bench on the first CPU, every server on the second",
    "shared": "the bench and every server on the first CPU",
}
"""On these 2-vCPU VMs a round trip costs ~100 µs when client and server run on
different CPUs and ~50 µs when they share one, and with ``free`` the scheduler
picks per process and per phase: a server and its floor can land in different
modes within one run. ``split`` and ``shared`` hold both sides in the same
mode, to tell a real difference from a placement one."""

_server_cpu: int | None = None


def place(placement: str) -> None:
    """Pin this process (and later the servers) as ``placement`` says."""
    global _server_cpu
    if placement == "free":
        return
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2 and placement == "split":
        raise SystemExit("--placement split needs two CPUs")
    os.sched_setaffinity(0, {cpus[0]})
    _server_cpu = cpus[1] if placement == "split" else cpus[0]


def _pin_server(pid: int) -> None:
    if _server_cpu is not None:
        os.sched_setaffinity(pid, {_server_cpu})


# -- commands --------------------------------------------------------------


def contextls_argv() -> list[str]:
    override = os.environ.get("CONTEXTLS_BENCH_SERVER")
    return shlex.split(override) if override else [sys.executable, "-m", "contextls", "serve"]


def echo_argv() -> list[str]:
    return [sys.executable, str(BENCH_DIR / "echo_server.py")]


def bare_pygls_argv() -> list[str]:
    return [sys.executable, str(BENCH_DIR / "bare_pygls_server.py")]


# -- LSP session -------------------------------------------------------------


def initialize_params(root: Path, options: dict[str, Any] | None) -> dict[str, Any]:
    uri = root.as_uri()
    params: dict[str, Any] = {
        "processId": os.getpid(),
        "rootUri": uri,
        "capabilities": {},
        "workspaceFolders": [{"uri": uri, "name": root.name}],
    }
    if options is not None:
        params["initializationOptions"] = options
    return params


async def open_session(
    name: str,
    argv: Sequence[str],
    root: Path,
    options: dict[str, Any] | None,
    stderr_dir: Path | None = None,
) -> RpcClient:
    """Spawn, ``initialize`` (with ``options`` as initializationOptions), ``initialized``.

    The child's stderr goes to a file under ``stderr_dir`` (never to a pipe
    nobody reads, which would block a chatty server).
    """
    stderr = open(stderr_dir / f"{name}.stderr", "wb") if stderr_dir else None  # noqa: SIM115
    try:
        client = await RpcClient.spawn(
            argv, name=name, stderr=stderr if stderr is not None else subprocess.DEVNULL
        )
    finally:
        if stderr is not None:
            stderr.close()  # the child holds its own descriptor
    _pin_server(client.pid)
    await asyncio.wait_for(client.call("initialize", initialize_params(root, options)), 60)
    client.notify("initialized", {})
    return client


def contextls_options(
    storage: Path | str,
    *,
    max_items: int = 50,
    max_tokens: int = 8000,
    **extra: Any,
) -> dict[str, Any]:
    return {"storage": str(storage), "maxItems": max_items, "maxTokens": max_tokens, **extra}


class Lab:
    """A temp dir holding workspaces, stores and logs; closes every child on exit."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.logs = tmp / "logs"
        self.logs.mkdir()
        self.clients: list[RpcClient] = []

    def workspace(self, name: str) -> Path:
        root = self.tmp / "ws" / name
        root.mkdir(parents=True, exist_ok=True)
        return root

    async def contextls(self, name: str, workspace: str | None = None, **options: Any) -> RpcClient:
        """The real server, with its store in the lab unless ``storage`` is given.

        The workspace folder is ``ws/<workspace or name>``: servers that must
        see the same archive (it is keyed by workspace) share a name.
        """
        options.setdefault("storage", self.tmp / f"{name}.sqlite3")
        client = await open_session(
            name,
            contextls_argv(),
            self.workspace(workspace or name),
            contextls_options(**options),
            self.logs,
        )
        self.clients.append(client)
        return client

    async def echo(self, name: str = "echo") -> RpcClient:
        client = await open_session(name, echo_argv(), self.workspace(name), None, self.logs)
        self.clients.append(client)
        return client

    async def close(self, client: RpcClient) -> None:
        if client in self.clients:
            self.clients.remove(client)
        await client.close()

    def stderr_tail(self, name: str, lines: int = 20) -> str:
        path = self.logs / f"{name}.stderr"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


@asynccontextmanager
async def lab() -> AsyncIterator[Lab]:
    with tempfile.TemporaryDirectory(prefix="contextls-bench-") as tmp:
        the_lab = Lab(Path(tmp))
        try:
            yield the_lab
        finally:
            await asyncio.gather(*(c.close() for c in the_lab.clients), return_exceptions=True)


# -- measuring -------------------------------------------------------------


async def interleave(
    rounds: int,
    subjects: Sequence[K],
    measure: Callable[[K, int], Awaitable[T]],
) -> dict[K, list[T]]:
    """Run ``measure(subject, round)`` for every subject, every round.

    The order flips each round (A B, B A, ...) so neither side always runs
    first, and the garbage collector is paused inside a measurement (a client
    GC pause would land on whichever side happened to be running).
    """
    results: dict[K, list[T]] = {s: [] for s in subjects}
    for r in range(rounds):
        order = list(subjects) if r % 2 == 0 else list(reversed(subjects))
        for s in order:
            gc.collect()
            gc.disable()
            try:
                results[s].append(await measure(s, r))
            finally:
                gc.enable()
    return results


async def sequential(client: RpcClient, method: str, params: Sequence[Any]) -> list[int]:
    """Round-trip ns of each request, one at a time."""
    out = []
    for p in params:
        ns, _ = await client.timed_raw(method, p)
        out.append(ns)
    return out


async def alternating(
    clients: Sequence[RpcClient],
    method: str,
    params: Sequence[Sequence[Any]],
    block: int = BLOCK,
) -> list[list[int]]:
    """Round-trip ns of each request, the clients taking turns every ``block`` requests.

    ``params[i]`` is the list of params for ``clients[i]``. Fine-grained turns
    mean both sides see the same machine state (which core the scheduler
    picked, a neighbour's burst) instead of a long block each. Not one request
    at a time, though: then every request lands on a process that has just
    slept while the other side ran, which adds ~25 µs to both sides on these
    VMs and so compresses the ratio (1.32x instead of 1.39x for status);
    blocks of 10-50 give the block-wise ratio with interleaving's stability
    (two identical echo servers within 1-3 %).
    """
    out: list[list[int]] = [[] for _ in clients]
    total = len(params[0])
    for start in range(0, total, block):
        for i, client in enumerate(clients):
            for p in params[i][start : start + block]:
                ns, _ = await client.timed_raw(method, p)
                out[i].append(ns)
    return out


def rss_kib(pid: int) -> int:
    """Resident set size of a process (VmRSS, includes mapped file pages)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


# -- CLI -----------------------------------------------------------------


Bench = Callable[[Config], Coroutine[Any, Any, list[Row]]]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="smaller counts, fewer rounds")
    parser.add_argument(
        "--fill",
        choices=("store", "lsp"),
        default="store",
        help="bench 5: fill the archive through the store (fast) or contextls/addText",
    )
    parser.add_argument(
        "--placement",
        choices=tuple(PLACEMENTS),
        default="free",
        help="; ".join(f"{name}: {what}" for name, what in PLACEMENTS.items()),
    )


def config(args: argparse.Namespace) -> Config:
    place(args.placement)
    return Config(quick=args.quick, fill=args.fill, placement=args.placement)


def bench_main(bench: Bench, title: str, argv: Sequence[str] | None = None) -> list[Row]:
    parser = argparse.ArgumentParser(description=title)
    add_arguments(parser)
    rows = asyncio.run(bench(config(parser.parse_args(argv))))
    print_rows(rows, f"{title} — verdict")
    return rows
