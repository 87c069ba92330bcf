"""Bench 10: the archive's lifecycle: how big the file stays, what pruning costs, and
whether adds feel it.

1. **Size.** 100,000 adds of ~1 KB texts through the real service (in
   process, a window of 50), the idle turns run every 1,000 adds as a
   server's would between requests, with the default retention (10,000
   archived items). The database file (WAL checkpointed) against the raw
   bytes of the text it keeps.
2. **Prune cost** per item: each prune batch timed (delete, search index,
   commit, incremental vacuum), divided by its items.
3. **Adds while pruning**, over LSP against the real server: adds sent
   60 ms apart (so the server goes idle between them and prunes), to two
   servers whose archives hold the same 30,000 items: one with
   archiveMaxItems 10,000 (20,000 to prune), one without retention.
   Target: add p50 while pruning <= 1.1x without.

    .venv/bin/python tests/bench/bench_lifecycle.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
import time
from pathlib import Path

from _archive_fill import fill_store, workspace_key
from _corpus import Corpus
from _harness import lab
from _stats import Row, fmt_us, median, percentile, print_rows, ratio

from contextls.app.service import PRUNE_BATCH, ContextService
from contextls.app.session import Session

TARGET = 1.1


class _Quiet:
    def status_changed(self, status: object) -> None:
        pass

    def evicted(self, workspace: str, items: object, reason: object) -> None:
        pass


def size_and_prune_cost(adds: int) -> list[Row]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-life-"))
    corpus = Corpus(seed=17)
    try:
        root = tmp / "project"
        root.mkdir()
        database = tmp / "db.sqlite3"
        service = ContextService(_Quiet(), lambda uri: None, lambda m: None, lambda d, c: None)
        session = Session(service, lambda m: None)
        session.set_folders([root.as_uri()])
        session.configure({"storage": str(database), "maxTokens": 1_000_000}, initial=True)
        workspace = session.route()
        prunes: list[tuple[int, int]] = []  # (ns, items)
        real_prune = workspace.lifecycle.prune

        def timed_prune(now: int, batch: int) -> int:
            began = time.perf_counter_ns()
            count = real_prune(now, batch)
            prunes.append((time.perf_counter_ns() - began, count))
            return count

        workspace.lifecycle.prune = timed_prune  # type: ignore[method-assign]
        vacuums: list[int] = []
        real_give_back = service.store.give_back_space

        def timed_give_back() -> int:
            began = time.perf_counter_ns()
            pages = real_give_back()
            vacuums.append(time.perf_counter_ns() - began)
            return pages

        service.store.give_back_space = timed_give_back  # type: ignore[method-assign]
        began = time.perf_counter()
        for n in range(adds):
            workspace.adding.add_text("text", corpus.text(1000, f"note {n}"))
            service.commit()
            if n % 1000 == 999:
                while service.index_some() is not False:  # the idle turns between requests
                    pass
        while service.index_some() is not False:
            pass
        elapsed = time.perf_counter() - began
        store = service.store
        store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        file_size = os.path.getsize(database)
        kept = workspace.archive.bytes + sum(len(i.content.encode()) for i in workspace.window)
        archived = workspace.archived_count
        service.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    per_item = [ns / count for ns, count in prunes if count]
    batch_ns = [ns for ns, count in prunes if count]
    return [
        Row(
            f"{adds:,} adds in {elapsed:.0f} s: archive kept",
            f"{archived:,} items",
            "-",
            None,
            "10,000",
            archived == 10_000,
        ),
        Row(
            "database file vs the text it keeps",
            f"{file_size / 1e6:.1f} MB",
            f"{kept / 1e6:.1f} MB",
            ratio(file_size, kept),
            "-",
            None,
        ),
        Row(
            f"prune, per item ({len(per_item)} batches of <= {PRUNE_BATCH})",
            fmt_us(median(per_item)),
            "-",
            None,
            "-",
            None,
        ),
        Row(
            "prune, one batch (p50 / p95)",
            fmt_us(median(batch_ns)),
            fmt_us(percentile(batch_ns, 95)),
            None,
            "-",
            None,
        ),
        Row(
            "search-index merge + incremental vacuum after a batch (p50 / p95)",
            fmt_us(median(vacuums)),
            fmt_us(percentile(vacuums, 95)),
            None,
            "-",
            None,
        ),
    ]


async def adds_while_pruning(rounds: int) -> list[Row]:
    corpus = Corpus(seed=3)
    async with lab() as the_lab:
        servers = {}
        # The same archive of 30,000 items for both; only the retention differs.
        for name, keep in (("pruning", 10_000), ("no retention", 0)):
            slug = name.replace(" ", "-")
            storage = the_lab.tmp / f"{slug}.sqlite3"
            key = await workspace_key(the_lab, slug, storage)
            fill_store(storage, key, corpus, 30_000)
            servers[name] = await the_lab.contextls(
                slug,
                storage=storage,
                max_items=50,
                max_tokens=1_000_000,
                archiveMaxItems=keep,
            )
        samples: dict[str, list[int]] = {name: [] for name in servers}
        for n in range(rounds):
            for name, client in servers.items():
                await asyncio.sleep(0.06)  # long enough for the server to go idle and prune
                began = time.perf_counter_ns()
                await client.call(
                    "contextls/addText", {"kind": "text", "content": f"add {n} " * 30}
                )
                samples[name].append(time.perf_counter_ns() - began)
        left = (await servers["pruning"].call("contextls/status", {}))["archivedCount"]
    busy, calm = median(samples["pruning"]), median(samples["no retention"])
    return [
        Row(
            "addText p50 while pruning (60 ms apart)",
            fmt_us(busy),
            fmt_us(calm),
            ratio(busy, calm),
            f"<= {TARGET}x",
            ratio(busy, calm) <= TARGET,
        ),
        Row(
            "addText p95 while pruning",
            fmt_us(percentile(samples["pruning"], 95)),
            fmt_us(percentile(samples["no retention"], 95)),
            None,
            "-",
            None,
        ),
        Row(
            "archive left to prune at the end",
            f"{max(left - 10_000, 0):,} items",
            "-",
            None,
            "-",
            None,
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer adds (indicative only)")
    args = parser.parse_args()
    rows = size_and_prune_cost(20_000 if args.quick else 100_000)
    rows += asyncio.run(adds_while_pruning(40 if args.quick else 200))
    print_rows(rows, "Bench 10: the archive's lifecycle")


if __name__ == "__main__":
    main()
