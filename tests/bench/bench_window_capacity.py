"""Bench 3: per-add cost at capacity for windows of 50, 500 and 1,000 items.

Isolates what the window's size costs an add once it is full (every add then
evicts the oldest item): the design requires O(1) eviction, never a copy of
the window. Token budget is set to the maximum (10,000,000) so only the item
count limits; items are small distinct notes (~15 tokens) so nothing else
(tokenizing, payload size) grows with the window.

Three figures, each at 50 / 500 / 1,000 items:

* contextls end to end (primary): three servers, one per size, filled to
  capacity, then sequential ``contextls/addText`` whose round trips take
  turns across the three every 20 requests; median of per-round p50s.
  The round trip includes the fixed transport cost, which dilutes a
  size-dependent cost, hence the next figure.
* contextls core in process (secondary): ``contextls.core.window.Window.add``
  timed in batches, with a constant-cost token counter so that tokenizing
  cannot hide a size-dependent cost of the data structure itself; and the
  same followed by the status snapshot (``contextls.app.protocol_views.status``) the server
  takes after every add, since that is per-add work too.
* the seed's algorithm as the baseline (000: ``subseq`` then append, i.e.
  copy the window on every eviction): ``items = items[1:]; items.append(x)``.

Target: 1,000 items <= 1.5x 50 items (both contextls figures).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from _harness import Config, alternating, bench_main, interleave, lab
from _stats import Row, fmt_us, median, percentile, print_table, ratio_row, spread

SIZES = (50, 500, 1000)
MAX_TOKENS = 10_000_000
LIMIT = 1.5


def notes(n: int, offset: int) -> list[dict[str, Any]]:
    return [
        {"kind": "text", "content": f"note {offset + i}: cache key includes the tenant"}
        for i in range(n)
    ]


async def lsp_per_add(cfg: Config) -> dict[int, list[float]]:
    """Per-round p50 round trip (ns) of an add at capacity, per window size."""
    rounds, per_round = cfg.pick(8, 3), cfg.pick(300, 100)
    async with lab() as the_lab:
        clients = [
            await the_lab.contextls(f"cap{n}", max_items=n, max_tokens=MAX_TOKENS) for n in SIZES
        ]
        for n, client in zip(SIZES, clients, strict=True):
            await client.pipelined("contextls/addText", notes(n + 100, 10_000_000), 64)
            status = await client.call("contextls/status", {})
            assert status["itemCount"] == n, f"window of {n} holds {status['itemCount']} items"

        async def measure(_subject: str, r: int) -> list[float]:
            order = list(range(len(SIZES)))
            if r % 2:
                order.reverse()
            got = await alternating(
                [clients[i] for i in order],
                "contextls/addText",
                [notes(per_round, r * per_round)] * len(SIZES),
            )
            by_size = dict(zip(order, got, strict=True))
            return [percentile(by_size[i], 50) for i in range(len(SIZES))]

        per_round_p50 = (await interleave(rounds, ["all"], measure))["all"]
    return {n: [row[i] for row in per_round_p50] for i, n in enumerate(SIZES)}


def seed_add_factory(size: int) -> Callable[[object], None]:
    items: list[object] = [object() for _ in range(size)]

    def add(item: object) -> None:
        nonlocal items
        if len(items) >= size:
            items = items[1:]  # the seed's (subseq items 1): a fresh copy of the window
        items.append(item)

    return add


def core_add_factory(size: int, with_status: bool = False) -> Callable[[object], None] | None:
    try:
        from contextls.app.protocol_views import status
        from contextls.core.candidates import Candidate
        from contextls.core.window import Limits, Window
        from contextls.protocol import WindowSettings
        from contextls.storage.store import ArchiveState
    except ImportError:
        return None
    clock = iter(range(1, 1 << 62))
    window = Window(
        Limits(max_items=size, max_tokens=MAX_TOKENS),
        count_tokens=lambda _text: 15,
        now_ms=lambda: next(clock),
    )
    for i in range(size):
        window.add(Candidate(kind="text", content=f"fill {i}"))

    def add(item: object) -> None:
        window.add(Candidate(kind="text", content=str(item)))

    def add_and_report(item: object) -> None:
        window.add(Candidate(kind="text", content=str(item)))
        # The server also snapshots the status after every add (for the
        # result and the didChangeStatus push): part of an add's cost.
        status("ws", window, WindowSettings(), 0, 0, 0, ArchiveState())

    return add_and_report if with_status else add


def core_add_status_factory(size: int) -> Callable[[object], None] | None:
    return core_add_factory(size, with_status=True)


async def in_process_per_add(
    cfg: Config,
    factory: Callable[[int], Callable[[object], None] | None],
) -> dict[int, list[float]] | None:
    """Per-add ns per size: batches of adds, sizes taking turns batch by batch."""
    adders = {n: factory(n) for n in SIZES}
    if any(a is None for a in adders.values()):
        return None
    batch = cfg.pick(3000, 1000)

    async def measure(n: int, r: int) -> float:
        add = adders[n]
        assert add is not None
        payload = [f"item {r}-{i}" for i in range(batch)]
        start = time.perf_counter_ns()
        for x in payload:
            add(x)
        return (time.perf_counter_ns() - start) / batch

    return await interleave(cfg.pick(15, 3), SIZES, measure)


async def run(cfg: Config) -> list[Row]:
    figures: dict[str, dict[int, list[float]] | None] = {
        "contextls via LSP (round trip)": await lsp_per_add(cfg),
        "contextls core Window.add": await in_process_per_add(cfg, core_add_factory),
        "contextls core add + status": await in_process_per_add(cfg, core_add_status_factory),
        "seed copy-on-evict": await in_process_per_add(cfg, seed_add_factory),
    }
    table = []
    for name, fig in figures.items():
        if fig is None:
            table.append([name, "not importable", "", "", ""])
            continue
        base = median(fig[SIZES[0]])
        table.append(
            [
                name,
                *(f"{fmt_us(median(fig[n]))} ({median(fig[n]) / base:.2f}x)" for n in SIZES),
                spread(fig[SIZES[-1]]),
            ]
        )
    print_table(
        ["per add at capacity", *(f"{n} items" for n in SIZES), "1000 spread"],
        table,
        "Bench 3: per-add cost at capacity (median of rounds)",
    )

    rows = []
    for name, limit in (
        ("contextls via LSP (round trip)", LIMIT),
        ("contextls core Window.add", LIMIT),
        ("contextls core add + status", LIMIT),
        ("seed copy-on-evict", None),
    ):
        fig = figures[name]
        if fig is None:
            continue
        for n in SIZES[1:]:
            rows.append(
                ratio_row(
                    f"{name}: {n} vs {SIZES[0]} items",
                    median(fig[n]),
                    median(fig[SIZES[0]]),
                    limit if n == SIZES[-1] else None,
                )
            )
    return rows


def main() -> None:
    bench_main(run, "Bench 3: window capacity")


if __name__ == "__main__":
    main()
