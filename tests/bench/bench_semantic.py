"""Semantic search benches (issue 15), in process, side by side in one run.

Not yet wired into run_all.py's table: it prints its own lines. It isolates
the semantic package over a real store file:

- semantic / hybrid p95 over 100,000 archived items (random unit vectors in
  the real side table, real FTS archive rows), warm, query embedding included;
- first query after start: a fresh interpreter imports, loads the model
  (sha256 check) and the 100k vectors, and answers one query;
- indexing throughput: the real indexer (claim, chunk, embed, store) vs the
  bare model on the same chunks;
- RSS of that fresh process with the model and 100k vectors loaded.

    .venv/bin/python tests/bench/bench_semantic.py [--items 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = "file:///bench"
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from tests.relevance.corpus import QUERIES, documents  # noqa: E402

from contextls.semantic import indexer, vectors  # noqa: E402
from contextls.semantic.chunks import chunk_ids  # noqa: E402
from contextls.semantic.engine import Engine  # noqa: E402
from contextls.semantic.model import Embedder  # noqa: E402
from contextls.semantic.retrieval import retrieve  # noqa: E402
from contextls.store import Store  # noqa: E402

WORDS = [
    "upload",
    "retry",
    "cache",
    "token",
    "window",
    "archive",
    "render",
    "search",
    "socket",
    "parse",
]


def fill(path: Path, items: int, model_id: str) -> None:
    Store(path).close()
    rng = np.random.default_rng(7)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO archive (root, id, kind, label, content, metadata, timestamp, tokens,"
        " encoding, pinned, archived_at, reason) VALUES (?, ?, 'text', ?, ?, '{}', 0, 10,"
        " 'o200k_base', 0, 0, 'evicted')",
        (
            (ROOT, f"ctx-{n}", f"item {n}", " ".join(rng.choice(WORDS, 12)) + f" n{n}")
            for n in range(items)
        ),
    )
    block = rng.standard_normal((items, 384)).astype(np.float32)
    block /= np.linalg.norm(block, axis=1, keepdims=True)
    db.executemany(
        "INSERT INTO semantic_vectors (root, id, chunk, model, vector) VALUES (?, ?, 0, ?, ?)",
        ((ROOT, f"ctx-{n}", model_id, block[n].tobytes()) for n in range(items)),
    )
    db.execute("COMMIT")
    db.close()


def p(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def first_query(path: Path) -> dict[str, float]:
    script = (
        "import time, json, resource; t = time.perf_counter()\n"
        "from contextls.semantic.engine import Engine\n"
        f"e = Engine({str(path)!r}); hits = e.search({ROOT!r}, 'where do we retry uploads', 10)\n"
        "elapsed = time.perf_counter() - t\n"
        "print(json.dumps({'seconds': elapsed, 'hits': len(hits),"
        " 'rss_mib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    embedder = Embedder()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "store.db"
        fill(path, args.items, embedder.model_id)
        starts = [first_query(path) for _ in range(3)]
        engine = Engine(str(path))
        store = Store(path)
        queries = [q for q, _ in QUERIES] * (args.queries // len(QUERIES) + 1)
        engine.search(ROOT, "warm up", 10)
        semantic_ms = []
        hybrid_ms = []
        for query in queries[: args.queries]:
            t = time.perf_counter()
            engine.search(ROOT, query, 10)
            semantic_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            retrieve(store, engine, ROOT, query, 10, None, "hybrid")
            hybrid_ms.append((time.perf_counter() - t) * 1000)
        store.close()

    # Indexing throughput: real indexer vs the bare model on the same chunks.
    docs = [doc.content for doc in documents()][:200]
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "store.db"
        store = Store(path)
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO archive (root, id, kind, label, content, metadata, timestamp, tokens,"
            " encoding, pinned, archived_at, reason) VALUES (?, ?, 'code', '', ?, '{}', 0, 1,"
            " 'o200k_base', 0, 0, 'evicted')",
            ((ROOT, f"ctx-{n}", text) for n, text in enumerate(docs)),
        )
        db.execute("COMMIT")
        chunks = [chunk_ids(embedder.pieces(text)) for text in docs]
        t = time.perf_counter()
        for item_chunks in chunks:
            embedder.embed_ids(item_chunks)
        bare = len(docs) / (time.perf_counter() - t)
        t = time.perf_counter()
        while indexer.index_some(db, embedder, batch=4):
            pass
        real = len(docs) / (time.perf_counter() - t)
        assert vectors.pending_count(db, embedder.model_id) == 0
        db.close()
        store.close()

    print(f"archive: {args.items:,} vectors; {args.queries} queries (relevance-set text)")
    print(
        f"semantic  p50 {statistics.median(semantic_ms):.2f} ms  p95 {p(semantic_ms, 0.95):.2f} ms"
        "  (target p95 <= 25 ms)"
    )
    print(
        f"hybrid    p50 {statistics.median(hybrid_ms):.2f} ms  p95 {p(hybrid_ms, 0.95):.2f} ms"
        "  (target p95 <= 30 ms)"
    )
    first = statistics.median(s["seconds"] for s in starts)
    print(f"first query after start (fresh process, median of 3): {first:.2f} s  (target <= 1 s)")
    rss = statistics.median(s["rss_mib"] for s in starts)
    print(f"RSS, model + {args.items:,} vectors: {rss:.0f} MiB  (target <= 400 MiB)")
    print(
        f"indexing: indexer {real:.1f} items/s vs bare model {bare:.1f} items/s ="
        f" {real / bare:.2f}x  (target >= 0.8x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
