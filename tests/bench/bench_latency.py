"""Bench 1: sequential round-trip latency of addText and status vs the echo floor.

Isolates the per-request cost of the server's whole request path (framing,
dispatch, param conversion, handler, result encoding, the status
notification) against what a hand-written JSON-RPC loop costs for the same
message. 5,000 sequential requests per method and side, server and floor take
turns every 20 requests (the first mover flips each round, and rounds
alternate the methods); p50/p99 are medians of the per-round values.

The server runs with the defaults (maxItems 50, maxTokens 8,000) and a fresh
SQLite store, so after the first 50 adds every add also evicts one item into
the archive: the steady state of a long-running editor session. The echo
server gets the same method and params and sends them back.

Target: p50 of each <= 1.5x the echo floor.
"""

from __future__ import annotations

from typing import Any

from _harness import Config, alternating, bench_main, interleave, lab, sequential
from _stats import Row, fmt_us, median, percentile, print_table, ratio_row, spread

METHODS = ("contextls/addText", "contextls/status")
LIMIT = 1.5


def params_for(method: str, n: int, offset: int) -> list[Any]:
    if method == "contextls/status":
        return [{}] * n
    return [
        {"kind": "text", "content": f"note {offset + i}: retry budget is 3 attempts"}
        for i in range(n)
    ]


async def run(cfg: Config) -> list[Row]:
    total = cfg.pick(5000, 1000)
    rounds = cfg.pick(10, 4)
    per_round = total // rounds
    sides = ("contextls", "echo")
    async with lab() as the_lab:
        clients = {"contextls": await the_lab.contextls("server"), "echo": await the_lab.echo()}
        for client in clients.values():  # warm up both paths (imports, caches, first eviction)
            for method in METHODS:
                await sequential(client, method, params_for(method, 200, 10_000_000))

        async def measure(method: str, r: int) -> dict[str, list[int]]:
            # Server and floor take turns every BLOCK requests; who goes first flips per round.
            order = sides if r % 2 == 0 else sides[::-1]
            params = params_for(method, per_round, r * per_round)
            got = await alternating([clients[s] for s in order], method, [params] * 2)
            return dict(zip(order, got, strict=True))

        by_method = await interleave(rounds, METHODS, measure)
        notes = dict(clients["contextls"].notification_counts)

    samples = {(side, m): [rnd[side] for rnd in by_method[m]] for m in METHODS for side in sides}
    p50 = {k: [percentile(v, 50) for v in rounds_] for k, rounds_ in samples.items()}
    p99 = {k: [percentile(v, 99) for v in rounds_] for k, rounds_ in samples.items()}
    print_table(
        ["method", "side", "p50", "p50 spread", "p99", "p99 spread", "n"],
        [
            [
                m,
                side,
                fmt_us(median(p50[(side, m)])),
                spread(p50[(side, m)]),
                fmt_us(median(p99[(side, m)])),
                spread(p99[(side, m)]),
                str(sum(map(len, samples[(side, m)]))),
            ]
            for m in METHODS
            for side in sides
        ],
        "Bench 1: sequential round trip (median of rounds)",
    )
    print(f"server notifications received: {notes}")

    rows = []
    for m in METHODS:
        short = m.split("/")[1]
        rows.append(
            ratio_row(
                f"{short} p50 vs echo",
                median(p50[("contextls", m)]),
                median(p50[("echo", m)]),
                LIMIT,
            )
        )
        rows.append(
            ratio_row(
                f"{short} p99 vs echo",
                median(p99[("contextls", m)]),
                median(p99[("echo", m)]),
                None,
            )
        )
    return rows


def main() -> None:
    bench_main(run, "Bench 1: round-trip latency")


if __name__ == "__main__":
    main()
