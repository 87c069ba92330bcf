"""Does the own transport still pay for itself? The server on it vs on stock pygls.

The ``contextls/*`` requests bypass pygls' reader, dispatch, converter and
writer (``server/contextls/lsp/transport.py``, ``dispatch.py``,
``outbox.py``, ``converter.py``). Every add is also committed to SQLite
before its answer, which puts a floor under an add that no transport can
go below. This bench starts, in the same run, six servers and measures the
same requests on each:

- ``echo``: ``echo_server.py``, a hand-written JSON-RPC loop (the floor of
  any transport);
- ``floor``: ``floor_server.py --commit each``, the echo plus one SQLite
  insert and commit per add with the store's pragmas (the floor of a
  durable add answered on its own);
- ``floor-batch``: ``floor_server.py --commit read``, the same but one commit
  per read of stdin, as the real server's outbox does (throughput only:
  sequential requests come one per read, so it equals ``floor`` there);
- ``pygls-echo``: ``stock_pygls_server.py --echo``, the same two requests
  registered on a plain pygls ``LanguageServer`` as echoes (what stock pygls
  costs by itself);
- ``contextls``: ``python -m contextls serve``, the service on the own transport;
- ``stock-pygls``: ``stock_pygls_server.py``, the same service and handlers on
  a plain pygls ``LanguageServer`` (``@server.feature``, ``start_io()``), each
  add committed before its handler returns.

Sequential: addText (a small note) and status, ``alternating`` turns of 20
requests among the sides, p50/p99 as medians of per-round values (as bench
1). Throughput: 64 in flight, rounds alternating among the sides with
≥ 50 ms of untimed traffic before each (as bench 2). Both contextls-side
servers run with the defaults (maxItems 50, maxTokens 8,000) on a fresh store
each, so once the window is full every add also evicts into the archive.

Semantic search is off (``CONTEXTLS_SEMANTIC=off`` unless set otherwise) in
both servers of the service: its embedding worker runs in whichever server is
idle, i.e. while another side is being measured, and on a 2-core machine it
takes that side's CPU. It is the same work on either transport.

No target: the figures decide whether the own transport stays
(``server/contextls/lsp/README.md``). The verdict rows are own transport vs
stock pygls (below 1x: the own transport is faster; for throughput, above 1x).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from _client import RpcClient
from _harness import (
    BENCH_DIR,
    Config,
    Lab,
    alternating,
    bench_main,
    contextls_options,
    interleave,
    lab,
    open_session,
    sequential,
)
from _stats import Row, fmt_us, median, percentile, print_table, ratio, ratio_row, spread
from bench_latency import METHODS, params_for
from bench_throughput import INFLIGHT, warm_up

SEQUENTIAL = ("echo", "floor", "pygls-echo", "contextls", "stock-pygls")
PIPELINED = ("echo", "floor", "floor-batch", "pygls-echo", "contextls", "stock-pygls")


async def spawn(the_lab: Lab, side: str) -> RpcClient:
    if side == "echo":
        return await the_lab.echo()
    if side == "contextls":
        return await the_lab.contextls("contextls")
    if side.startswith("floor"):
        commit = "read" if side == "floor-batch" else "each"
        argv = [
            sys.executable,
            str(BENCH_DIR / "floor_server.py"),
            "--db",
            str(the_lab.tmp / f"{side}.sqlite3"),
            "--commit",
            commit,
        ]
        options = None
    elif side == "pygls-echo":
        argv = [sys.executable, str(BENCH_DIR / "stock_pygls_server.py"), "--echo"]
        options = None
    else:
        argv = [sys.executable, str(BENCH_DIR / "stock_pygls_server.py")]
        options = contextls_options(the_lab.tmp / f"{side}.sqlite3")
    client = await open_session(side, argv, the_lab.workspace(side), options, the_lab.logs)
    the_lab.clients.append(client)
    return client


def vs(value: float, floor: float) -> str:
    return f"{ratio(value, floor):.2f}x"


async def measure_sequential(
    clients: dict[str, RpcClient], total: int, rounds: int
) -> dict[tuple[str, str], list[list[int]]]:
    per_round = total // rounds

    async def measure(method: str, r: int) -> dict[str, list[int]]:
        order: Sequence[str] = SEQUENTIAL if r % 2 == 0 else SEQUENTIAL[::-1]
        params = params_for(method, per_round, r * per_round)
        got = await alternating([clients[s] for s in order], method, [params] * len(order))
        return dict(zip(order, got, strict=True))

    by_method = await interleave(rounds, METHODS, measure)
    return {(s, m): [rnd[s] for rnd in by_method[m]] for m in METHODS for s in SEQUENTIAL}


async def measure_pipelined(
    clients: dict[str, RpcClient], per_round: int, rounds: int
) -> dict[tuple[str, str], list[float]]:
    async def measure(subject: tuple[str, str], r: int) -> float:
        side, method = subject
        await warm_up(clients[side], method)
        ns = await clients[side].pipelined(
            method, params_for(method, per_round, 30_000_000 + r * per_round), INFLIGHT
        )
        return per_round / (ns / 1e9)

    subjects = [(side, m) for m in METHODS for side in PIPELINED]
    return await interleave(rounds, subjects, measure)


async def run(cfg: Config) -> list[Row]:
    total = cfg.pick(4000, 600)
    rounds = cfg.pick(10, 3)
    per_round = cfg.pick(3000, 400)
    tp_rounds = cfg.pick(8, 3)
    os.environ.setdefault("CONTEXTLS_SEMANTIC", "off")  # inherited by the servers
    async with lab() as the_lab:
        clients = {side: await spawn(the_lab, side) for side in PIPELINED}
        for client in clients.values():  # imports, caches, the window filled (evicting)
            for method in METHODS:
                await sequential(client, method, params_for(method, 200, 10_000_000))
                await client.pipelined(method, params_for(method, 500, 20_000_000), INFLIGHT)
        samples = await measure_sequential(clients, total, rounds)
        rates = await measure_pipelined(clients, per_round, tp_rounds)
        notes = {side: dict(client.notification_counts) for side, client in clients.items()}

    p50 = {k: [percentile(v, 50) for v in rs] for k, rs in samples.items()}
    p99 = {k: [percentile(v, 99) for v in rs] for k, rs in samples.items()}
    mid50 = {k: median(v) for k, v in p50.items()}
    mid99 = {k: median(v) for k, v in p99.items()}
    print_table(
        [
            "method",
            "side",
            "p50",
            "spread",
            "p99",
            "spread",
            "p50 vs echo",
            "p50 vs floor",
            "p99 vs echo",
            "p99 vs floor",
            "n",
        ],
        [
            [
                m,
                s,
                fmt_us(mid50[(s, m)]),
                spread(p50[(s, m)]),
                fmt_us(mid99[(s, m)]),
                spread(p99[(s, m)]),
                vs(mid50[(s, m)], mid50[("echo", m)]),
                vs(mid50[(s, m)], mid50[("floor", m)]),
                vs(mid99[(s, m)], mid99[("echo", m)]),
                vs(mid99[(s, m)], mid99[("floor", m)]),
                str(sum(map(len, samples[(s, m)]))),
            ]
            for m in METHODS
            for s in SEQUENTIAL
        ],
        "Sequential round trip (median of rounds)",
    )
    rate = {k: median(v) for k, v in rates.items()}
    print_table(
        ["method", "side", "req/s", "spread", "vs echo", "vs floor", "vs floor-batch"],
        [
            [
                m,
                s,
                f"{rate[(s, m)]:,.0f}",
                spread(rates[(s, m)]),
                vs(rate[(s, m)], rate[("echo", m)]),
                vs(rate[(s, m)], rate[("floor", m)]),
                vs(rate[(s, m)], rate[("floor-batch", m)]),
            ]
            for m in METHODS
            for s in PIPELINED
        ],
        f"Throughput, {INFLIGHT} in flight (median of rounds)",
    )
    print("notifications received:", {side: n for side, n in notes.items() if n})

    rows: list[Row] = []
    for m in METHODS:
        short = m.split("/")[1]
        own, stock = ("contextls", m), ("stock-pygls", m)
        rows.append(ratio_row(f"{short} p50, own vs stock pygls", mid50[own], mid50[stock], None))
        rows.append(ratio_row(f"{short} p99, own vs stock pygls", mid99[own], mid99[stock], None))
        rows.append(
            ratio_row(
                f"{short} req/s, {INFLIGHT} in flight, own vs stock pygls",
                rate[own],
                rate[stock],
                None,
                "req/s",
            )
        )
    return rows


def main() -> None:
    bench_main(run, "Own transport vs stock pygls")


if __name__ == "__main__":
    main()
