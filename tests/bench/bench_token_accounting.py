"""Bench 4: per-add cost with 10 vs 200 items of 400 tokens in the window.

Isolates token accounting: an add must cost the same whatever the window
already holds, because each item is tokenized once and the total is kept
incrementally (a design invariant). Both servers run with maxItems 1,000 and
a token budget that holds exactly 10 (resp. 200) items of 400 tokens
(10*400+200 and 200*400+200), so the token budget is what binds and every add
of a fresh 400-token item evicts exactly one item by tokens. Item texts are
cut to exactly 400 tokens with the server's encoding (o200k_base).

Figures:

* contextls end to end: sequential ``contextls/addText`` round trips taking
  turns between the two servers every 20 requests; median of per-round
  p50s. Both adds tokenize one new 400-token item and move the same payload
  (the new item, the evicted one, the notifications), so any difference is
  the window's accounting.
* contextls core in process, ``Window.add`` with the real tokenizer.
* "full recount" baseline: re-tokenizing every item in the window on each
  add (what incremental accounting avoids), with the same tokenizer.

Target: 200 items <= 1.2x 10 items (contextls figures).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

import _tokenizer
from _corpus import Corpus
from _harness import Config, alternating, bench_main, interleave, lab
from _stats import Row, fmt_us, median, percentile, print_table, ratio_row, spread

ITEM_TOKENS = 400
COUNTS = (10, 200)
LIMIT = 1.2


def budget(count: int) -> int:
    # Room for exactly `count` items: half an item of slack, never a whole one.
    return count * ITEM_TOKENS + ITEM_TOKENS // 2


class Texts:
    """An endless supply of distinct, exactly-400-token code-like texts."""

    def __init__(self) -> None:
        self._corpus = Corpus(seed=4)
        self._n = 0

    def take(self, n: int) -> list[str]:
        out = []
        for _ in range(n):
            self._n += 1
            out.append(_tokenizer.exactly(self._corpus.text(2600, f"item {self._n}"), ITEM_TOKENS))
        return out


def adds(texts: list[str]) -> list[dict[str, Any]]:
    return [{"kind": "code", "content": t, "language": "python"} for t in texts]


async def lsp_per_add(cfg: Config, texts: Texts) -> dict[int, list[float]]:
    rounds, per_round = cfg.pick(8, 3), cfg.pick(200, 60)
    async with lab() as the_lab:
        clients = [
            await the_lab.contextls(f"tok{n}", max_items=1000, max_tokens=budget(n)) for n in COUNTS
        ]
        for n, client in zip(COUNTS, clients, strict=True):
            first = await client.call("contextls/addText", adds(texts.take(1))[0])
            assert first["item"]["tokens"] == ITEM_TOKENS, first["item"]["tokens"]
            await client.pipelined("contextls/addText", adds(texts.take(n + 30)), 16)
            status = await client.call("contextls/status", {})
            assert status["itemCount"] == n, f"window for {n} holds {status['itemCount']}"
        batches = [adds(texts.take(per_round)) for _ in range(rounds)]

        async def measure(_subject: str, r: int) -> list[float]:
            order = [0, 1] if r % 2 == 0 else [1, 0]
            got = await alternating(
                [clients[i] for i in order], "contextls/addText", [batches[r]] * 2
            )
            by_index = dict(zip(order, got, strict=True))
            return [percentile(by_index[i], 50) for i in range(len(COUNTS))]

        rows = (await interleave(rounds, ["all"], measure))["all"]
    return {n: [row[i] for row in rows] for i, n in enumerate(COUNTS)}


def core_factory(count: int, fill: list[str]) -> Callable[[str], None] | None:
    try:
        from contextls.core.window import Candidate, Limits, Window
    except ImportError:
        return None
    enc = _tokenizer.encoding()
    clock = iter(range(1, 1 << 62))
    window = Window(
        Limits(max_items=1000, max_tokens=budget(count)),
        count_tokens=lambda text: len(enc.encode_ordinary(text)),
        now_ms=lambda: next(clock),
    )
    for text in fill:
        window.add(Candidate(kind="code", content=text))
    assert len(window) == count

    def add(text: str) -> None:
        window.add(Candidate(kind="code", content=text))

    return add


def recount_factory(count: int, fill: list[str]) -> Callable[[str], None]:
    enc = _tokenizer.encoding()
    window: deque[str] = deque(fill[-count:])
    limit = budget(count)

    def add(text: str) -> None:
        window.append(text)
        # The naive budget check: re-tokenize the whole window once per add,
        # then drop the oldest until it fits.
        counts = deque(len(enc.encode_ordinary(t)) for t in window)
        total = sum(counts)
        while total > limit:
            total -= counts.popleft()
            window.popleft()

    return add


async def in_process_per_add(
    cfg: Config,
    texts: Texts,
    factory: Callable[[int, list[str]], Callable[[str], None] | None],
    batch: int,
    rounds: int,
) -> dict[int, list[float]] | None:
    """Per-add ns per window: batches of adds, the two windows taking turns."""
    fill = texts.take(COUNTS[-1] + 5)
    adders = {n: factory(n, fill) for n in COUNTS}
    if any(a is None for a in adders.values()):
        return None
    payloads = [texts.take(batch) for _ in range(rounds)]

    async def measure(n: int, r: int) -> float:
        add = adders[n]
        assert add is not None
        start = time.perf_counter_ns()
        for text in payloads[r]:
            add(text)
        return (time.perf_counter_ns() - start) / batch

    return await interleave(len(payloads), COUNTS, measure)


async def run(cfg: Config) -> list[Row]:
    texts = Texts()
    figures = {
        "contextls via LSP (round trip)": await lsp_per_add(cfg, texts),
        "contextls core Window.add": await in_process_per_add(
            cfg, texts, core_factory, cfg.pick(100, 30), cfg.pick(11, 3)
        ),
        # A recount at 200 items takes ~15 ms per add: fewer, smaller batches.
        "full recount baseline": await in_process_per_add(
            cfg, texts, recount_factory, cfg.pick(10, 5), cfg.pick(5, 3)
        ),
    }
    table = []
    for name, fig in figures.items():
        if fig is None:
            table.append([name, "not importable", "", ""])
            continue
        table.append(
            [
                name,
                *(fmt_us(median(fig[n])) for n in COUNTS),
                f"{median(fig[COUNTS[1]]) / median(fig[COUNTS[0]]):.2f}x",
                spread(fig[COUNTS[1]]),
            ]
        )
    print_table(
        ["per add", *(f"{n} items in window" for n in COUNTS), "ratio", f"{COUNTS[1]} spread"],
        table,
        f"Bench 4: per-add cost, items of {ITEM_TOKENS} tokens (median of rounds)",
    )

    rows = []
    for name, fig in figures.items():
        if fig is not None:
            limit = None if name.startswith("full") else LIMIT
            rows.append(
                ratio_row(
                    f"{name}: {COUNTS[1]} vs {COUNTS[0]} items",
                    median(fig[COUNTS[1]]),
                    median(fig[COUNTS[0]]),
                    limit,
                )
            )
    core, recount = figures["contextls core Window.add"], figures["full recount baseline"]
    if core is not None and recount is not None:
        # Inverted on purpose: how many times the core's cost a recount would be.
        slow, fast = median(recount[COUNTS[1]]), median(core[COUNTS[1]])
        rows.append(
            Row(
                f"full recount ÷ core, {COUNTS[1]} items",
                fmt_us(fast),
                fmt_us(slow),
                slow / fast,
                "-",
                None,
            )
        )
    return rows


def main() -> None:
    bench_main(run, "Bench 4: token accounting")


if __name__ == "__main__":
    main()
