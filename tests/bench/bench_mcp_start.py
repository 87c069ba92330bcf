"""Bench: ``contextls mcp`` start-up, spawn -> ``initialize`` answered, vs the reference
filesystem server (``@modelcontextprotocol/server-filesystem``, node), in the same run.

A host spawns an MCP server and waits for its ``initialize`` answer before anything
else; that wait is the start-up a person feels. Each run spawns a fresh process,
sends ``initialize`` at 2025-11-25 (what Claude Code, Claude Desktop and VS Code
send) and times until the answer is read; then ``notifications/initialized`` and
``tools/list``, timed too (the first request the SDK itself serves), and the input
is closed. Runs alternate between the servers after one discarded warm-up each.
contextls runs against its daemon already started (as after the editor or any CLI
command), on a database of its own.

Target: median contextls <= 1.5x median filesystem server (initialize answered).
The filesystem server comes from ``make test-python`` (tests/mcp/node_modules).

Usage: .venv/bin/python tests/bench/bench_mcp_start.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIMIT = 1.5
ROOT = Path(__file__).resolve().parents[2]
FILESYSTEM = ROOT / "tests" / "mcp" / "node_modules" / ".bin" / "mcp-server-filesystem"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}
THEN = [
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def line(message: object) -> bytes:
    return json.dumps(message).encode() + b"\n"


def one_start(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Seconds from spawn to the ``initialize`` answer, and to the ``tools/list`` answer."""
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        cwd=cwd, env=env,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(line(INITIALIZE))
    process.stdin.flush()
    answer = json.loads(process.stdout.readline())
    initialized = time.perf_counter() - started
    assert answer.get("id") == 1 and "result" in answer, answer
    process.stdin.write(b"".join(map(line, THEN)))
    process.stdin.flush()
    while json.loads(process.stdout.readline()).get("id") != 2:
        pass
    listed = time.perf_counter() - started
    process.stdin.close()
    process.wait(timeout=30)
    return initialized, listed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    if not FILESYSTEM.exists():
        print(f"missing {FILESYSTEM}: run `make mcp-test-clients`", file=sys.stderr)
        return 2
    contextls = shutil.which("contextls", path=str(Path(sys.executable).parent))
    assert contextls is not None, "run `make setup`"
    scratch = Path(tempfile.mkdtemp(prefix="cls-bench-mcp-"))
    project = scratch / "project"
    (project / ".git").mkdir(parents=True)
    env = {
        **os.environ,
        "CONTEXTLS_STORAGE": str(scratch / "db.sqlite3"),
        "CONTEXTLS_RUNTIME_DIR": str(scratch / "run"),
        "CONTEXTLS_STATE_DIR": str(scratch / "state"),
    }
    servers = {
        "contextls mcp": [contextls, "mcp"],
        "server-filesystem": [str(FILESYSTEM), str(project)],
    }
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in servers}
    try:
        subprocess.run([contextls, "status"], cwd=project, env=env, check=True,
                       capture_output=True)  # fmt: skip
        for argv in servers.values():
            one_start(argv, project, env)  # warm-up: file cache, bytecode
        for _ in range(runs):
            for name, argv in servers.items():
                times[name].append(one_start(argv, project, env))
    finally:
        subprocess.run([contextls, "daemon", "stop"], cwd=project, env=env, capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)
    medians = {
        name: (
            statistics.median(t[0] for t in runs_of),
            statistics.median(t[1] for t in runs_of),
        )
        for name, runs_of in times.items()
    }
    print(f"{'server':<20} {'initialize answered':>20} {'tools/list answered':>20}   ({runs} runs)")
    for name, (initialized, listed) in medians.items():
        print(f"{name:<20} {initialized * 1000:>17.0f} ms {listed * 1000:>17.0f} ms")
    ours, floor = medians["contextls mcp"], medians["server-filesystem"]
    ratio = ours[0] / floor[0]
    print(f"ratio, initialize answered: {ratio:.2f}x (target <= {LIMIT}x)")
    print(f"ratio, tools/list answered: {ours[1] / floor[1]:.2f}x (reported)")
    return 0 if ratio <= LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
