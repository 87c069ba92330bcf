"""Bench: ``contextls mcp`` start-up, spawn -> opening answered -> first ``tools/list``
answered, at every era a host opens with, vs the reference filesystem server
(``@modelcontextprotocol/server-filesystem``, node), in the same run.

A host spawns an MCP server and waits for its answer to the opening (``initialize``
at 2024-11-05 … 2025-11-25: Claude Code, Claude Desktop, VS Code, Gemini CLI, Codex;
``server/discover`` at 2026-07-28) before anything else, and for ``tools/list`` before
the agent can use it. Each run spawns a fresh process, sends the opening and times
until its answer is read; then ``notifications/initialized`` (at the handshake) and
``tools/list``, timed too, and the input is closed. Runs alternate between the servers
after one discarded warm-up each. contextls runs against its daemon already started
(as after the editor or any CLI command), on a database of its own. A server that does
not speak an era's opening is reported as such.

Targets: opening answered <= 1.5x the filesystem server, first ``tools/list`` answered
<= 1.0x, at every era both speak. The filesystem server comes from
``make test-python`` (tests/mcp/node_modules).

Usage: python tests/bench/bench_mcp_start.py [--runs N]
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
LIST_LIMIT = 1.0
ROOT = Path(__file__).resolve().parents[2]
FILESYSTEM = ROOT / "tests" / "mcp" / "node_modules" / ".bin" / "mcp-server-filesystem"
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
ERAS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", MODERN)


def opening(era: str) -> dict[str, object]:
    if era == MODERN:
        return {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": era,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }


def then(era: str) -> list[dict[str, object]]:
    if era == MODERN:
        return [{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": META}}]
    return [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]


def line(message: object) -> bytes:
    return json.dumps(message).encode() + b"\n"


def one_start(
    argv: list[str], cwd: Path, env: dict[str, str], era: str
) -> tuple[float, float] | None:
    """Seconds from spawn to the opening's answer, and to the ``tools/list`` answer (None:
    the server answered the opening with an error)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        cwd=cwd, env=env,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(line(opening(era)))
    process.stdin.flush()
    answer = json.loads(process.stdout.readline())
    initialized = time.perf_counter() - started
    if answer.get("id") != 1 or "result" not in answer:
        process.stdin.close()
        process.wait(timeout=30)
        return None
    process.stdin.write(b"".join(map(line, then(era))))
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
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    unspoken: set[tuple[str, str]] = set()
    try:
        subprocess.run([contextls, "status"], cwd=project, env=env, check=True,
                       capture_output=True)  # fmt: skip
        for argv in servers.values():
            one_start(argv, project, env, ERAS[-2])  # warm-up: file cache, bytecode
        for _ in range(runs):
            for era in ERAS:
                for name, argv in servers.items():
                    took = one_start(argv, project, env, era)
                    if took is None:
                        unspoken.add((name, era))
                    else:
                        times.setdefault((name, era), []).append(took)
    finally:
        subprocess.run([contextls, "daemon", "stop"], cwd=project, env=env, capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{'era':<12} {'server':<18} {'opening answered':>17} {'tools/list':>11}  ({runs} runs)")
    missed = False
    for era in ERAS:
        medians = {}
        for name in servers:
            if (name, era) in unspoken or (name, era) not in times:
                print(f"{era:<12} {name:<18} {'does not speak this era':>30}")
                continue
            runs_of = times[(name, era)]
            medians[name] = (
                statistics.median(t[0] for t in runs_of),
                statistics.median(t[1] for t in runs_of),
            )
            opened, listed = medians[name]
            print(f"{era:<12} {name:<18} {opened * 1000:>14.0f} ms {listed * 1000:>8.0f} ms")
        if len(medians) == len(servers):
            ours, floor = medians["contextls mcp"], medians["server-filesystem"]
            ratio, listed_ratio = ours[0] / floor[0], ours[1] / floor[1]
            missed |= ratio > LIMIT or listed_ratio > LIST_LIMIT
            print(
                f"{era:<12} ratio: opening {ratio:.2f}x (target <= {LIMIT}x), "
                f"tools/list {listed_ratio:.2f}x (target <= {LIST_LIMIT}x)"
            )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
