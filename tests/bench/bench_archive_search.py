"""Bench 5: archive search over 100,000 items (~1 KB each), and the archive's RSS cost.

Isolates the archive: full-text search latency when the archive is large, and
whether a large archive stays on disk (SQLite) instead of in the server's
memory. Also prints what the archive's size does to an add (an add that
evicts writes into the archive), as a reference next to bench 1.

The archive holds 100,000 distinct ~1 KB code-like items (seeded generated
vocabulary with a Zipf law, see ``_corpus.py``), filled with ``--fill store``
(default: the server's own ``Store.archive``, seconds) or ``--fill lsp``
(addText at maxItems 1, each add evicting the previous item; minutes).

Then, in alternating pairs, a fresh server on the full store and a fresh
server on an empty store (same settings: maxItems 1, so every add evicts)
each answer a warm-up and a timed set of 2-3 word queries (half only common
identifiers, matching most of the archive; half a common word with rare
ones), the two taking turns every 10 queries. RSS (VmRSS of the server
process) is read after the searches; then both take turns on a few adds.
Figures are medians over the pairs of per-pair p50/p95.

Targets: search p95 <= 10 ms at 100k items; RSS with the 100k archive <= 1.2x
RSS with none.
"""

from __future__ import annotations

from typing import Any

from _archive_fill import LSP_SETTINGS, fill, texts
from _corpus import Corpus
from _harness import Config, alternating, bench_main, lab, rss_kib
from _stats import Row, fmt_us, median, percentile, print_table, ratio_row, spread

P95_LIMIT_NS = 10e6
RSS_LIMIT = 1.2
SIDES = ("full", "empty")


async def run(cfg: Config) -> list[Row]:
    n = cfg.pick(100_000, 10_000)
    pairs, per_pair, adds_per_pair = cfg.pick(3, 2), cfg.pick(120, 40), cfg.pick(60, 20)
    corpus = Corpus(seed=5)
    async with lab() as the_lab:
        print(f"Bench 5: archiving {n:,} items (--fill {cfg.fill}) ...", flush=True)
        fill_s = await fill(the_lab, cfg.fill, "archive", the_lab.tmp / "full.sqlite3", corpus, n)
        store_mb = sum(p.stat().st_size for p in the_lab.tmp.glob("full.sqlite3*")) / 1e6
        # Keyword search (FTS5): bench 11 (bench_semantic.py) measures hybrid and semantic.
        warm = [{"query": q, "mode": "keyword"} for q in corpus.queries(10)]
        fig: dict[str, list[float]] = {}
        hits: list[int] = []
        archived = 0
        for pair in range(pairs):
            order = SIDES if pair % 2 == 0 else SIDES[::-1]
            # A fresh empty store each pair: the adds below would otherwise
            # leave matching items in it for the next pair's searches.
            stores = {
                "full": the_lab.tmp / "full.sqlite3",
                "empty": the_lab.tmp / f"e{pair}.sqlite3",
            }
            clients = {}
            for s in order:
                clients[s] = await the_lab.contextls(
                    s, workspace="archive", storage=stores[s], **LSP_SETTINGS
                )
            archived = (await clients["full"].call("contextls/status", {}))["archivedCount"]
            for s in order:
                for q in warm:
                    result = await clients[s].call("contextls/search", q)
                    if s == "full":
                        hits.append(len(result["hits"]))
            queries = [{"query": q, "mode": "keyword"} for q in corpus.queries(per_pair)]
            got = await alternating(
                [clients[s] for s in order], "contextls/search", [queries] * 2, block=10
            )
            for s, ns in zip(order, got, strict=True):
                fig.setdefault(f"search p50 {s}", []).append(percentile(ns, 50))
                fig.setdefault(f"search p95 {s}", []).append(percentile(ns, 95))
                fig.setdefault(f"rss {s}", []).append(rss_kib(clients[s].pid))
            adds: list[Any] = [
                {"kind": "code", "language": "python", "content": t}
                for t in texts(corpus, 10_000_000 + pair * adds_per_pair, adds_per_pair)
            ]
            got = await alternating([clients[s] for s in order], "contextls/addText", [adds] * 2)
            for s, ns in zip(order, got, strict=True):
                fig.setdefault(f"add p50 {s}", []).append(percentile(ns, 50))
            for s in order:
                await the_lab.close(clients[s])

    def us(key: str) -> list[str]:
        return [fmt_us(median(fig[key])), spread(fig[key])]

    def kib(key: str) -> list[str]:
        return [f"{median(fig[key]):,.0f} KiB", spread(fig[key])]

    print_table(
        ["figure", "value", "spread"],
        [
            [f"fill ({cfg.fill})", f"{fill_s:.0f} s", "-"],
            ["archived items / store on disk", f"{archived:,} / {store_mb:,.0f} MB", "-"],
            ["hits per warm-up query (limit 20)", f"{median(hits):.0f} median", "-"],
            ["search p50, full archive", *us("search p50 full")],
            ["search p95, full archive", *us("search p95 full")],
            ["search p50, empty archive", *us("search p50 empty")],
            ["RSS, full archive", *kib("rss full")],
            ["RSS, empty archive", *kib("rss empty")],
            ["addText p50 (evicting), full archive", *us("add p50 full")],
            ["addText p50 (evicting), empty archive", *us("add p50 empty")],
        ],
        f"Bench 5: archive of {n:,} items (median over {pairs} server pairs)",
    )
    p95 = median(fig["search p95 full"])
    label = f"{n // 1000}k archived"
    return [
        Row(f"search p95, {label}", fmt_us(p95), "-", None, "<= 10 ms", p95 <= P95_LIMIT_NS),
        ratio_row(
            f"search p50, {label} vs empty",
            median(fig["search p50 full"]),
            median(fig["search p50 empty"]),
            None,
        ),
        ratio_row(
            f"RSS, {label} vs empty",
            median(fig["rss full"]),
            median(fig["rss empty"]),
            RSS_LIMIT,
            "KiB",
        ),
        ratio_row(
            f"addText p50, {label} vs empty",
            median(fig["add p50 full"]),
            median(fig["add p50 empty"]),
            None,
        ),
    ]


def main() -> None:
    bench_main(run, "Bench 5: archive search")


if __name__ == "__main__":
    main()
