"""Bench 6: ``contextls/render`` (markdown) of a window holding ~100k tokens.

Isolates rendering a large window for an LLM: walking the items, headers and
fences, the rendered text's token count, and moving ~0.5 MB over stdio. The
window (maxTokens 200,000, maxItems 1,000) holds 250 code items of exactly
400 tokens, so nothing is evicted and the render covers all of them.

The floor is the echo server returning a payload of the same size (sent and
received: twice the bytes render moves, so the floor is generous to the
transport). Renders and echoes take turns request by request. A render counts
only the sections it has not counted before (``Tokenizer.count_pieces``), so
the first render, which counts all of them, is reported apart.
"""

from __future__ import annotations

import time
from typing import Any

import _tokenizer
from _corpus import Corpus
from _harness import Config, alternating, bench_main, interleave, lab
from _stats import Row, fmt_us, median, percentile, print_table, ratio_row, spread

ITEMS = 250
ITEM_TOKENS = 400


async def run(cfg: Config) -> list[Row]:
    rounds, per_round = cfg.pick(7, 3), cfg.pick(10, 4)
    corpus = Corpus(seed=6)
    contents = [
        _tokenizer.exactly(corpus.text(2600, f"module {i}"), ITEM_TOKENS) for i in range(ITEMS)
    ]
    async with lab() as the_lab:
        server = await the_lab.contextls("render", max_items=1000, max_tokens=200_000)
        echo = await the_lab.echo()
        adds: list[dict[str, Any]] = [
            {
                "kind": "code",
                "content": c,
                "language": "python",
                "metadata": {
                    "path": f"src/module_{i}.py",
                    "startLine": 1,
                    "endLine": c.count("\n") + 1,
                },
            }
            for i, c in enumerate(contents)
        ]
        await server.pipelined("contextls/addText", adds, 16)
        status = await server.call("contextls/status", {})
        assert status["itemCount"] == ITEMS, status
        started = time.perf_counter_ns()
        first = await server.call("contextls/render", {"format": "markdown"})
        first_ns = time.perf_counter_ns() - started
        echo_params = {"text": first["text"]}
        for _ in range(2):  # warm-up
            await server.call("contextls/render", {"format": "markdown"})
            await echo.call("contextls/render", echo_params)

        async def measure(_subject: str, r: int) -> dict[str, list[int]]:
            order = [server, echo] if r % 2 == 0 else [echo, server]
            params = [
                [{"format": "markdown"}] * per_round if c is server else [echo_params] * per_round
                for c in order
            ]
            # One at a time: a render takes ~ms, so waking a process that slept is noise.
            got = await alternating(order, "contextls/render", params, block=1)
            return {c.name: ns for c, ns in zip(order, got, strict=True)}

        results = (await interleave(rounds, ["all"], measure))["all"]

    p50 = {name: [percentile(r[name], 50) for r in results] for name in ("render", "echo")}
    print_table(
        ["figure", "value", "spread"],
        [
            ["window", f"{status['itemCount']} items, {status['tokens']:,} tokens", "-"],
            ["rendered", f"{len(first['text']):,} chars, {first['tokens']:,} tokens", "-"],
            ["first render (counts every section)", fmt_us(first_ns), "-"],
            ["render p50", fmt_us(median(p50["render"])), spread(p50["render"])],
            ["echo of same-size payload p50", fmt_us(median(p50["echo"])), spread(p50["echo"])],
        ],
        "Bench 6: render markdown, ~100k tokens (median of rounds)",
    )
    return [
        ratio_row(
            f"render p50, {status['tokens'] // 1000}k-token window",
            median(p50["render"]),
            median(p50["echo"]),
            3.0,
        )
    ]


def main() -> None:
    bench_main(run, "Bench 6: render")


if __name__ == "__main__":
    main()
