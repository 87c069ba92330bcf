"""Bench 12: a bulk add's backlog being embedded: how long, and the server's peak RSS.

A person adds a folder of ~170 real files (Python's own standard library here)
to a roomy window and clears it into the archive: the server then embeds
~170 window items and ~170 archived copies in the background. This measures,
on the real server over LSP (``contextls serve``):

- the time until ``status`` says nothing waits (items per second);
- the server's RSS while it works: sampled every 0.2 s, and its high-water mark
  (``VmHWM``), against the README's figure and against the floor: a bare
  process that loads the same model and embeds the same files in one go.

    .venv/bin/python tests/bench/bench_backlog.py [--files N]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
from pathlib import Path

from contextls.protocol import AddFilesParams, ClearParams, FileTarget, Requests, StatusParams
from contextls_client.lsp_client import ContextlsClient

README_PEAK_MIB = 400
"""The README's bound for the server with the model loaded (``Search by meaning``)."""


def stdlib_files(count: int) -> list[Path]:
    """The first ``count`` modules of the standard library, by name, of 1-40 KB."""
    root = Path(sysconfig.get_paths()["stdlib"])
    found = [path for path in sorted(root.glob("*.py")) if 1_000 <= path.stat().st_size <= 40_000]
    return found[:count]


def memory_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process, in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields["VmRSS"], fields["VmHWM"]


async def serve_backlog(files: list[Path], folder: Path) -> dict[str, float]:
    workspace = folder / "ws"
    workspace.mkdir()
    for path in files:
        (workspace / path.name).write_bytes(path.read_bytes())
    client = ContextlsClient(request_timeout=600)
    async with client:
        await client.initialize(
            workspace,
            {"storage": str(folder / "db.sqlite3"), "maxTokens": 2_000_000, "maxItems": 1000},
        )
        pid = client._process.pid  # type: ignore[union-attr]
        root = workspace.as_uri()
        added = await client.call(
            Requests.ADD_FILES,
            AddFilesParams(workspace=root, targets=[FileTarget(uri=root)], force=True),
        )
        await client.call(Requests.CLEAR, ClearParams(workspace=root))
        started = time.monotonic()
        samples: list[int] = []
        while True:
            status = await client.call(Requests.STATUS, StatusParams(workspace=root))
            semantic = status.semantic
            assert semantic is not None and semantic.available, semantic
            samples.append(memory_kib(pid)[0])
            if semantic.pending + semantic.window_pending == 0:
                break
            await asyncio.sleep(0.2)
        elapsed = time.monotonic() - started
        _, peak = memory_kib(pid)
    return {
        "items": len(added.items),
        "seconds": elapsed,
        "peak_mib": peak / 1024,
        "low_mib": min(samples) / 1024,
        "high_sampled_mib": max(samples) / 1024,
    }


def bare_model_peak(files: list[Path]) -> float:
    """Peak RSS (MiB) of a process that loads the model and embeds the same files."""
    code = textwrap.dedent(
        f"""
        import resource
        from pathlib import Path
        from contextls.semantic.indexer import embed_item
        from contextls.semantic.model import Embedder
        embedder = Embedder()
        for name in {[str(path) for path in files]!r}:
            embed_item(embedder, Path(name).read_text(errors="replace"))
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=170)
    args = parser.parse_args()
    files = stdlib_files(args.files)
    with tempfile.TemporaryDirectory() as folder:
        served = asyncio.run(serve_backlog(files, Path(folder)))
    floor = bare_model_peak(files)
    items = served["items"]
    print(f"bench 12: a backlog of {items:.0f} files (window, then archive)")
    print(f"  embedded in {served['seconds']:.1f} s ({2 * items / served['seconds']:.1f} items/s)")
    print(
        f"  server RSS: peak {served['peak_mib']:.0f} MiB (VmHWM), sampled "
        f"{served['low_mib']:.0f}-{served['high_sampled_mib']:.0f} MiB"
    )
    print(f"  floor, the bare model embedding the same files: peak {floor:.0f} MiB")
    print(
        f"  ratio to the floor {served['peak_mib'] / floor:.2f}x; "
        f"README bound {README_PEAK_MIB} MiB: "
        f"{'met' if served['peak_mib'] <= README_PEAK_MIB else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
