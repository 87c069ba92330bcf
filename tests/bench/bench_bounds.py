"""Bench 15: the speed of what the suite proves by order (the suite holds no clock).

Three figures the test suite once bounded in seconds, each now a ratio against a floor
measured in the same run, rounds taking turns:

* the secret scan over the interpreter's own standard library (``secret_warnings`` on
  every ``.py`` file) against one pass of a plain regular expression over the same
  texts (``\\S+``: reading every character once);
* a 200 MB header line fed to the frame reader (it must refuse it in linear time and
  bounded memory) against ``bytes.find`` of a line end over the same chunks;
* hostile refusals over stdio (a FIFO, a device, a 600 KB URI, a NUL in a URI, a range a
  billion lines down) against a ``status`` round trip on the same server.

Targets: the scan <= 8x the regex pass (3.3-6.4x here, ~13 MB/s on a quiet core); the header
line <= 3x the find; a refusal <= 5x a status.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from _harness import Config, bench_main
from _stats import Row, median, print_table, ratio_row

from contextls.core.secrets import secret_warnings
from contextls.lsp.outbox import FrameReader, Outbox

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.e2e.rawio import RawServers

CHUNK = b"x" * 65536


def standard_library(limit_bytes: int) -> list[str]:
    root = Path(sysconfig.get_paths()["stdlib"])
    texts: list[str] = []
    size = 0
    for path in sorted(root.rglob("*.py")):
        if "site-packages" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        texts.append(text)
        size += len(text.encode())
        if size >= limit_bytes:
            break
    return texts


def scan(texts: list[str]) -> float:
    started = time.perf_counter()
    for text in texts:
        secret_warnings(text, "x.py")
    return time.perf_counter() - started


def regex_pass(texts: list[str]) -> float:
    words = re.compile(r"\S+")
    started = time.perf_counter()
    for text in texts:
        for _ in words.finditer(text):
            pass
    return time.perf_counter() - started


def header_line(megabytes: int) -> float:
    outbox = Outbox()
    outbox.attach(lambda data: None)
    reader = FrameReader(lambda body: None, outbox)
    started = time.perf_counter()
    for _ in range(megabytes * 1024 * 1024 // len(CHUNK)):
        reader.feed(CHUNK)
    reader.feed(b"\r\n")
    return time.perf_counter() - started


def find_pass(megabytes: int) -> float:
    started = time.perf_counter()
    for _ in range(megabytes * 1024 * 1024 // len(CHUNK)):
        CHUNK.find(b"\r\n")
    return time.perf_counter() - started


def refusals(root: Path, rounds: int) -> tuple[list[float], list[float]]:
    """Seconds per hostile refusal and per status, alternating, on one stdio server."""
    os.mkfifo(root / "pipe")
    (root / "whole.py").write_text("one\ntwo\n")
    far = {"line": 1_000_000_000, "character": 0}
    hostile = [
        ("contextls/addFile", {"uri": (root / "pipe").as_uri()}),
        ("contextls/addFile", {"uri": "file:///" + "a/" * 300_000}),
        ("contextls/addFile", {"uri": "file:///tmp/a\u0000.py"}),
        (
            "contextls/addRegion",
            {"uri": (root / "whole.py").as_uri(), "range": {"start": far, "end": far}},
        ),
    ]
    started = RawServers(root, root.parent / "bench.sqlite3")
    try:
        server = started()
        server.warm_up()
        refused: list[float] = []
        status: list[float] = []
        for _ in range(rounds):
            for method, params in hostile:
                began = time.perf_counter()
                assert "error" in server.request(method, params)
                refused.append(time.perf_counter() - began)
                began = time.perf_counter()
                server.result("contextls/status")
                status.append(time.perf_counter() - began)
        return refused, status
    finally:
        started.close_all()


async def run(cfg: Config) -> list[Row]:
    rounds = cfg.pick(5, 2)
    texts = standard_library(cfg.pick(32_000_000, 4_000_000))
    megabytes = sum(len(t.encode()) for t in texts) / 1e6
    print(f"Bench 15: {megabytes:.1f} MB of the standard library", flush=True)
    figures: dict[str, list[float]] = {k: [] for k in ("scan", "regex", "line", "find")}
    header_mb = cfg.pick(200, 50)
    for _ in range(rounds):
        figures["scan"].append(scan(texts))
        figures["regex"].append(regex_pass(texts))
        figures["line"].append(header_line(header_mb))
        figures["find"].append(find_pass(header_mb))
    where = Path(tempfile.mkdtemp(prefix="cls-bounds-"))
    try:
        (where / "ws").mkdir()
        refused, status = refusals(where / "ws", cfg.pick(50, 10))
    finally:
        shutil.rmtree(where, ignore_errors=True)
    m = {k: median(v) * 1e9 for k, v in figures.items()}
    refused_ns, status_ns = median(refused) * 1e9, median(status) * 1e9
    print_table(
        ["step", "median", "floor"],
        [
            [
                f"secret scan ({megabytes / (m['scan'] / 1e9):.1f} MB/s)",
                f"{m['scan'] / 1e6:,.0f} ms",
                f"{m['regex'] / 1e6:,.0f} ms",
            ],
            [
                f"{header_mb} MB header line",
                f"{m['line'] / 1e6:,.0f} ms",
                f"{m['find'] / 1e6:,.0f} ms",
            ],
            [
                "a hostile refusal / a status",
                f"{refused_ns / 1e6:,.2f} ms",
                f"{status_ns / 1e6:,.2f} ms",
            ],
        ],
        "Bench 15: what the suite proves by order, timed",
    )
    return [
        ratio_row("secret scan / one regex pass", m["scan"], m["regex"], 8.0),
        ratio_row("200 MB header line / find", m["line"], m["find"], 3.0),
        ratio_row("hostile refusal / status", refused_ns, status_ns, 5.0),
    ]


if __name__ == "__main__":
    bench_main(run, "Bench 15: bounds")
