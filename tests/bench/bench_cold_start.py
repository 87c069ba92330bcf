"""Bench 7: cold start, spawn -> ``initialize`` answered, vs a bare pygls server.

Isolates what contextls adds to start-up on top of Python, its libraries and
pygls itself: its own imports and whatever it does before answering
``initialize`` (tiktoken's BPE tables must load lazily, not here). The floor
is ``bare_pygls_server.py``, which imports the same libraries and registers
nothing; the echo server is printed as a reference (Python + asyncio only).

Each run spawns a fresh process with the same initialize params an editor
sends (a workspace folder, initializationOptions with a store that already
exists, as on every start but the first), times until the response is parsed,
then shuts the process down. Runs alternate between the servers; one
discarded warm-up run each first, so the OS file cache and the bytecode
cache (see ``child_env``) are warm for all.

Target: median contextls <= 1.15x median bare pygls.
"""

from __future__ import annotations

import os
import time

from _client import RpcClient
from _harness import (
    Config,
    Lab,
    bare_pygls_argv,
    bench_main,
    contextls_argv,
    contextls_options,
    echo_argv,
    initialize_params,
    interleave,
    lab,
)
from _stats import Row, fmt_us, median, print_table, ratio_row, spread

LIMIT = 1.15
NO_PYC = "contextls, no .pyc"


def child_env(the_lab: Lab, bytecode: bool) -> dict[str, str]:
    """The environment of a spawned server, with or without a bytecode cache.

    This machine sets PYTHONDONTWRITEBYTECODE=1 and contextls is an editable
    install, so without help it would compile its own ~30 modules on every
    start while its dependencies load the .pyc files pip wrote. A user's
    install has .pyc for all of them, so the measured runs give every server
    the same bytecode cache (under the lab, filled by the warm-up run);
    "contextls, no .pyc" shows the uncached start for reference.
    """
    env = dict(os.environ)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(the_lab.tmp / "pycache")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


async def time_start(the_lab: Lab, side: str) -> int:
    root = the_lab.workspace(side)
    storage = contextls_options(the_lab.tmp / "cold.sqlite3")
    argv, options = {
        "contextls": (contextls_argv(), storage),
        "bare pygls": (bare_pygls_argv(), None),
        "echo": (echo_argv(), None),
        NO_PYC: (contextls_argv(), storage),
    }[side]
    params = initialize_params(root, options)
    env = child_env(the_lab, bytecode=side != NO_PYC)
    start = time.perf_counter_ns()
    client = await RpcClient.spawn(argv, name=side, env=env)
    await client.call("initialize", params)
    elapsed = time.perf_counter_ns() - start
    client.notify("initialized", {})
    await client.close()
    return elapsed


async def run(cfg: Config) -> list[Row]:
    runs = cfg.pick(15, 5)
    sides = ("contextls", "bare pygls", "echo", NO_PYC)
    async with lab() as the_lab:
        for side in sides:
            await time_start(the_lab, side)
        times = await interleave(runs, sides, lambda side, _r: time_start(the_lab, side))

    print_table(
        ["server", "median", "spread", "min", "runs"],
        [
            [
                s,
                fmt_us(median(times[s])),
                spread(times[s]),
                fmt_us(min(times[s])),
                str(len(times[s])),
            ]
            for s in sides
        ],
        "Bench 7: spawn -> initialize answered",
    )
    return [
        ratio_row(
            "cold start vs bare pygls",
            median(times["contextls"]),
            median(times["bare pygls"]),
            LIMIT,
        ),
        ratio_row(
            "cold start, no .pyc, vs bare pygls",
            median(times[NO_PYC]),
            median(times["bare pygls"]),
            None,
        ),
        ratio_row(
            "cold start vs echo (ref.)", median(times["contextls"]), median(times["echo"]), None
        ),
    ]


def main() -> None:
    bench_main(run, "Bench 7: cold start")


if __name__ == "__main__":
    main()
