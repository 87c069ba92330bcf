"""Bench 8: a CLI command as a person types it, warm, against a minimal client's floor.

Each sample is one process, timed from spawn to exit: ``contextls status``,
``contextls ls``, ``contextls show`` and ``contextls add FILE`` on a running daemon
(started once, before the rounds, as the first command of a day would). The floor is
what any command-line client of a daemon pays at least: a Python process that connects
to a Unix socket, sends one framed JSON-RPC request to an echo server, reads the answer
and exits (stdlib only: socket, json). ``contextls --version`` is held to its own
floor, ``python -c pass``. The old way, a server spawned per command
(``CONTEXTLS_NO_DAEMON=1``), is measured too. Samples alternate between all of them
round by round; ratios are of medians in the same run.

Run it with the interpreter of a user's install (``pip install .``, not editable: an
editable install's path finder costs every process, the floor's too).

Targets: status, ls, show and add FILE <= 1.5x the floor; --version <= 1.5x
``python -c pass`` (pip's console-script wrapper imports ``re`` before our code runs:
about 5 ms of it here, our own part is well under 1 ms).

    python tests/bench/bench_cli.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from _stats import Row, fmt_us, median, percentile, print_rows, ratio

RATIO = 1.5

FLOOR_CLIENT = r"""
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "contextls/status", "params": {}}).encode()
s.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
data = b""
while b"\r\n\r\n" not in data:
    data += s.recv(65536)
head, _, rest = data.partition(b"\r\n\r\n")
length = int(head.split(b":")[1])
while len(rest) < length:
    rest += s.recv(65536)
json.loads(rest)
"""


def echo_server(path: str) -> socket.socket:
    """A Unix-socket server answering each framed request with its own body."""
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(64)

    def serve(conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, rest = data.partition(b"\r\n\r\n")
            length = int(head.split(b":")[1])
            while len(rest) < length:
                rest += conn.recv(65536)
            conn.sendall(b"Content-Length: %d\r\n\r\n" % length + rest[:length])

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Wall time of one process, spawn to exit, in ns (it must succeed)."""
    began = time.perf_counter_ns()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter_ns() - began
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed: {done.stderr.decode()}")
    return elapsed


FIRST_COMMAND_MS = 500
"""The first command of a day waits for the daemon to start (on a quiet machine)."""


def run(quick: bool) -> list[Row]:
    rounds = 8 if quick else 30
    tmp = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    runtime = Path(tempfile.mkdtemp(prefix="cls-"))
    workspace = tmp / "project"
    workspace.mkdir()
    (workspace / ".git").mkdir()
    for n in range(2):
        (workspace / f"mod{n}.py").write_text(
            "".join(f"def f{i}():\n    return {i}\n" for i in range(40))
        )
    env = {
        **os.environ,
        "CONTEXTLS_STORAGE": str(tmp / "db.sqlite3"),
        "CONTEXTLS_RUNTIME_DIR": str(runtime),
        "CONTEXTLS_STATE_DIR": str(tmp),
        "CONTEXTLS_CONFIG_DIR": str(tmp / "cfg"),
    }
    no_daemon = {**env, "CONTEXTLS_NO_DAEMON": "1"}
    contextls = str(Path(sys.executable).with_name("contextls"))
    echo = echo_server(str(runtime / "echo.sock"))
    samples: dict[str, list[float]] = {}
    cases: dict[str, Callable[[int], float]] = {
        "floor: minimal client": lambda n: timed(
            [sys.executable, "-c", FLOOR_CLIENT, str(runtime / "echo.sock")], env, workspace
        ),
        "floor: python -c pass": lambda n: timed([sys.executable, "-c", "pass"], env, workspace),
        "--version": lambda n: timed([contextls, "--version"], env, workspace),
        "status": lambda n: timed([contextls, "status"], env, workspace),
        "ls": lambda n: timed([contextls, "ls"], env, workspace),
        "show": lambda n: timed([contextls, "show"], env, workspace),
        "add FILE": lambda n: timed([contextls, "add", f"mod{n % 2}.py"], env, workspace),
        "status, a server per command": lambda n: timed(
            [contextls, "status"], no_daemon, workspace
        ),
    }
    try:
        began = time.perf_counter_ns()
        timed([contextls, "add", "mod0.py"], env, workspace)  # starts the daemon
        cold = time.perf_counter_ns() - began
        for n in range(rounds):
            for name, case in cases.items():
                samples.setdefault(name, []).append(case(n))
    finally:
        subprocess.run([contextls, "daemon", "stop"], env=env, cwd=workspace, capture_output=True)
        echo.close()
        shutil.rmtree(runtime, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)

    floor = median(samples["floor: minimal client"])
    bare = median(samples["floor: python -c pass"])
    rows = [
        Row("floor: minimal client", fmt_us(floor), "-", None, "-", None),
        Row("floor: python -c pass", fmt_us(bare), "-", None, "-", None),
    ]
    for name, against in (
        ("--version", bare),
        ("status", floor),
        ("ls", floor),
        ("show", floor),
        ("add FILE", floor),
    ):
        value = median(samples[name])
        rows.append(
            Row(
                f"{name} (p90 {fmt_us(percentile(samples[name], 90))})",
                fmt_us(value),
                fmt_us(against),
                ratio(value, against),
                f"<= {RATIO:g}x",
                ratio(value, against) <= RATIO,
            )
        )
    old = median(samples["status, a server per command"])
    rows.append(
        Row(
            "status, a server per command", fmt_us(old), fmt_us(floor), ratio(old, floor), "-", None
        )
    )
    rows.append(
        Row(
            "first command: starts the daemon",
            fmt_us(cold),
            "-",
            None,
            f"<= {FIRST_COMMAND_MS} ms quiet",
            cold <= FIRST_COMMAND_MS * 1_000_000,
        )
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (indicative only)")
    args = parser.parse_args()
    rows = run(args.quick)
    print_rows(rows, "Bench 8: CLI commands on the daemon, spawn to exit (medians)")


if __name__ == "__main__":
    main()
