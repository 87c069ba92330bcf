"""Run every bench and print one summary table (exit 1 if a target is missed).

    .venv/bin/python tests/bench/run_all.py [--quick] [--only latency,render,...]

``--quick`` uses smaller counts and fewer rounds (a smoke run: the verdicts
of a quick run are indicative only; quote the full run).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import traceback

import bench_archive_search
import bench_bounds
import bench_cache
import bench_cold_start
import bench_latency
import bench_render
import bench_semantic
import bench_structure
import bench_throughput
import bench_token_accounting
import bench_window_capacity
from _harness import Bench, add_arguments, config
from _stats import Row, print_rows

BENCHES: dict[str, Bench] = {
    "latency": bench_latency.run,
    "throughput": bench_throughput.run,
    "capacity": bench_window_capacity.run,
    "tokens": bench_token_accounting.run,
    "search": bench_archive_search.run,
    "render": bench_render.run,
    "coldstart": bench_cold_start.run,
    "semantic": bench_semantic.run,
    "structure": bench_structure.run,
    "bounds": bench_bounds.run,
    "cache": bench_cache.run,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--only", default="", help=f"comma list of: {', '.join(BENCHES)}")
    args = parser.parse_args()
    chosen = [b for b in args.only.split(",") if b] or list(BENCHES)
    unknown = set(chosen) - set(BENCHES)
    if unknown:
        parser.error(f"unknown bench(es): {', '.join(sorted(unknown))}")

    cfg = config(args)
    rows: list[Row] = []
    failed: list[str] = []
    started = time.perf_counter()
    for name in chosen:
        t0 = time.perf_counter()
        try:
            got = asyncio.run(BENCHES[name](cfg))
        except Exception:  # one broken bench must not hide the others' figures
            traceback.print_exc()
            failed.append(name)
            continue
        print_rows(got, f"{name} — verdict ({time.perf_counter() - t0:.0f} s)")
        rows.extend(got)

    mode = "quick" if args.quick else "full"
    print_rows(rows, f"SUMMARY ({mode} run, {time.perf_counter() - started:.0f} s)")
    missed = [r.metric for r in rows if r.passed is False]
    if failed:
        print(f"\nbenches that crashed: {', '.join(failed)}")
    if missed:
        print(f"\ntargets missed: {len(missed)}")
    sys.exit(1 if missed or failed else 0)


if __name__ == "__main__":
    main()
