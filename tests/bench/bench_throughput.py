"""Bench 2: pipelined throughput (64 requests in flight) vs the echo floor.

Isolates how well the server's transport and dispatch keep up when a client
does not wait for each answer (an editor firing adds and status polls while
typing): stdin reading, frame parsing, concurrency of handlers, and output
writing (plus the notifications each add pushes). The client keeps exactly
64 requests outstanding, with frames encoded before the clock starts, so its
own cost is next to nothing. Rounds alternate server and floor; the figure is
the median of per-round requests/second.

Server settings as in bench 1 (defaults, eviction into the archive on every
add once the window is full).

Target: throughput >= 0.5x the echo floor.
"""

from __future__ import annotations

import time

from _client import RpcClient
from _harness import Config, bench_main, interleave, lab
from _stats import Row, median, print_table, ratio_row, spread

METHODS = ("contextls/addText", "contextls/status")
INFLIGHT = 64
LIMIT = 0.5
WARM_UP_S = 0.05


def params_for(method: str, n: int, offset: int) -> list[object]:
    if method == "contextls/status":
        return [{}] * n
    return [
        {"kind": "text", "content": f"note {offset + i}: retry budget is 3 attempts"}
        for i in range(n)
    ]


async def warm_up(client: RpcClient, method: str) -> None:
    """Untimed traffic for >= 50 ms right before a timed round.

    A process that sat idle while the other side was measured runs its next
    ~20 ms at about half speed on these VMs (vCPU wake-up); a short round
    (the floor's take ~25 ms) would pay that in full and a long one (the
    server's) would not, which would flatter the ratio.
    """
    deadline = time.perf_counter() + WARM_UP_S
    while time.perf_counter() < deadline:
        await client.pipelined(method, params_for(method, 200, 20_000_000), INFLIGHT)


async def run(cfg: Config) -> list[Row]:
    per_round = cfg.pick(3000, 1000)
    rounds = cfg.pick(8, 4)
    async with lab() as the_lab:
        clients = {"contextls": await the_lab.contextls("server"), "echo": await the_lab.echo()}
        for client in clients.values():
            for method in METHODS:
                await client.pipelined(method, params_for(method, 500, 10_000_000), INFLIGHT)

        async def measure(subject: tuple[str, str], r: int) -> float:
            side, method = subject
            await warm_up(clients[side], method)
            ns = await clients[side].pipelined(
                method,
                params_for(method, per_round, r * per_round),
                INFLIGHT,
            )
            return per_round / (ns / 1e9)

        subjects = [(side, m) for m in METHODS for side in clients]
        rates = await interleave(rounds, subjects, measure)

    print_table(
        ["method", "side", "req/s", "spread", "rounds"],
        [
            [
                m,
                side,
                f"{median(rates[(side, m)]):,.0f}",
                spread(rates[(side, m)]),
                str(len(rates[(side, m)])),
            ]
            for m in METHODS
            for side in clients
        ],
        f"Bench 2: throughput, {INFLIGHT} in flight (median of rounds)",
    )
    return [
        ratio_row(
            f"{m.split('/')[1]} req/s, {INFLIGHT} in flight",
            median(rates[("contextls", m)]),
            median(rates[("echo", m)]),
            LIMIT,
            "req/s",
            at_least=True,
        )
        for m in METHODS
    ]


def main() -> None:
    bench_main(run, "Bench 2: pipelined throughput")


if __name__ == "__main__":
    main()
