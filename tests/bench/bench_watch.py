"""Bench 9: what the watch costs, the look twice a second that keeps context live.

In one process, with the real service, store and files: a window of N
whole-file items, and ``ContextService.look`` (other processes' commits,
then one stat per file, then what changed) timed when nothing changed and
when one file changed. The floor is the least any such check costs: a bare
loop of ``os.stat`` over the same files. The share of one CPU is the look's
median over the interval between looks.

    .venv/bin/python tests/bench/bench_watch.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _stats import Row, fmt_us, median, print_rows, ratio

from contextls.app.service import WATCH_INTERVAL, ContextService
from contextls.app.session import Session


def timed(action: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        began = time.perf_counter_ns()
        action()
        samples.append(time.perf_counter_ns() - began)
    return samples


def run(quick: bool) -> list[Row]:
    runs = 20 if quick else 100
    rows: list[Row] = []
    for count in (50, 1000):
        tmp = Path(tempfile.mkdtemp(prefix="bench-watch-"))
        try:
            root = tmp / "project"
            root.mkdir()
            paths = []
            for n in range(count):
                path = root / f"m{n}.py"
                path.write_text(f"def f{n}():\n    return {n}\n")
                paths.append(path)
            service = ContextService(_Quiet(), lambda uri: None, lambda m: None, lambda d, c: None)
            session = Session(service, lambda m: None)
            session.set_folders([root.as_uri()])
            session.configure(
                {"storage": str(tmp / "db.sqlite3"), "maxItems": 1000, "maxTokens": 1_000_000},
                initial=True,
            )
            workspace = session.route()
            for path in paths:
                workspace.adding.add_file(path.as_uri())
            service.commit()
            service.look()  # the first look reads every file once

            names = [str(path) for path in paths]
            floor = median(timed(lambda files=names: [os.stat(n) for n in files], runs))
            idle = median(timed(service.look, runs))
            changed = median(timed(_one_changed(paths[0], service), max(5, runs // 4)))
            rows.append(
                Row(
                    f"{count} files, nothing changed",
                    fmt_us(idle),
                    fmt_us(floor),
                    ratio(idle, floor),
                    "-",
                    None,
                )
            )
            rows.append(
                Row(
                    f"{count} files, one changed (read, recount, commit)",
                    fmt_us(changed),
                    fmt_us(floor),
                    ratio(changed, floor),
                    "-",
                    None,
                )
            )
            share = idle / (WATCH_INTERVAL * 1e9) * 100
            rows.append(
                Row(f"{count} files: share of one CPU", f"{share:.3f} %", "-", None, "-", None)
            )
            service.close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return rows


def _one_changed(path: Path, service: ContextService) -> Callable[[], None]:
    edits = iter(range(1, 1_000_000))

    def change_and_look() -> None:
        path.write_text(f"def f0():\n    return {next(edits)}\n")
        service.look()

    return change_and_look


class _Quiet:
    def status_changed(self, status: object) -> None:
        pass

    def evicted(self, workspace: str, items: object, reason: object) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (indicative only)")
    args = parser.parse_args()
    print_rows(run(args.quick), "Bench 9: the watch (medians; floor: os.stat of the same files)")


if __name__ == "__main__":
    main()
