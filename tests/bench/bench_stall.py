"""Bench 16: no request stalls the daemon: another client's latency while one works.

One daemon serves every client of a user, so a request that takes seconds must not take
them from anyone else. Two editor-like clients (``contextls connect --stdio``) on one
daemon: while the first sends a heavy request, the second sends ``status`` and
``addText`` in turn, timing each round trip; the same round trips with nothing else
running are the floor, measured in the same run. The heavy requests:

* a map of CPython's ``Lib/`` (the interpreter's standard library, 1,790 files, 34 MB, in
  a fresh git repository), then the map again after one file changed (this daemon does
  not prepare maps: ``$CONTEXTLS_MAP_PREPARE=off``, so the first map parses it all), then
  20 s of 100 files changing each second with the map in the window (it ranks them
  again as they change);
* a 100 KB file of 100,000 unclosed ``[``: ``symbolAt`` and ``addSymbolByName`` on it;
* ``countTokens`` of 1 MiB of prose in claude-opus-4.7's tokens, of a 1,000,000-space
  run (tiktoken panics on it: it must be answered), and of four runs of 65,535 ``é``
  (just short of the length counted by its period);
* another program writing 256 MB and syncing it, again and again (the daemon's commits
  and its WAL's checkpoints share the disk with it);
* a 900 KB file added as its outline;
* ``addText`` of 800 KB in claude-opus-4.7's tokens (the window's model from then on);
* then, in a second daemon (prepared maps on, as by default, a fresh facts cache): the
  preparation of the map a moment after the workspace opens (nobody asked for it), and
  the first map asked once its log says it is prepared.

Figures: the other client's ``status`` and ``addText`` p50/p99 during each, against idle
(a request that takes less than the probe's ``MIN_ROUNDS`` round trips and changes
nothing is sent again, one after the other, until the probe has them: a p99 of three
round trips would be their maximum); the first map against a single-threaded
tree-sitter parse of the same files (in process, same run), the map after one change
against the same parse; the same round trips while two processes outside the daemon
keep both cores busy (the control: what the machine adds when the work is elsewhere);
the daemon's peak RSS while the map is made, and the PSS of the
daemon with every process it started (the map's own, its parsers; PSS splits the pages
processes share); that every request was answered exactly once.

Targets: status p99 <= 0.2 s and addText p99 <= 0.5 s and <= 5x idle during each; the
first map <= 1.5x the parse and the map after one change <= 0.1x; RSS <= 400 MB.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _harness import Config, bench_main
from _stats import Row, percentile, print_table, ratio_row

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.support.rpc import RpcClient, notification

CONTEXTLS = str(Path(sys.executable).with_name("contextls"))
MIN_ROUNDS = 40
"""Round trips of the probe a request that changes nothing is sent again for."""
CHURN_PER_SECOND = 100
"""Files of ``Lib/`` changed each second while the map stays in the window."""
HOG_MEGABYTES = 256
"""What the program beside the daemon writes and syncs at a time, again and again."""


def cpython_lib(target: Path) -> Path:
    """A fresh git repository holding a copy of the standard library's ``.py`` files."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    lib = target / "Lib"
    for path in stdlib.rglob("*.py"):
        if "site-packages" in path.parts or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(stdlib)
        (lib / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, lib / rel)
    subprocess.run(["git", "init", "-q", str(target)], check=True)
    subprocess.run(["git", "-C", str(target), "add", "-A"], check=True)
    return lib


def parse_floor(lib: Path) -> float:
    """Seconds tree-sitter's own parser takes for every file, one thread, in memory."""
    from contextls.structure.parse import parse

    texts = [path.read_bytes() for path in sorted(lib.rglob("*.py"))]
    started = time.perf_counter()
    for text in texts:
        parse(text, "python")
    return time.perf_counter() - started


class Daemon:
    def __init__(self, root: Path, workspace: Path, prepare: bool = False) -> None:
        runtime = Path(tempfile.mkdtemp(prefix="cls-stall-"))
        self.runtime = runtime
        self.workspace = workspace
        self.env = {
            **os.environ,
            "CONTEXTLS_RUNTIME_DIR": str(runtime),
            "CONTEXTLS_STATE_DIR": str(root / "state"),
            "CONTEXTLS_STORAGE": str(root / "context.sqlite3"),
            "XDG_CACHE_HOME": str(root / "cache"),
            "CONTEXTLS_MAP_PREPARE": "on" if prepare else "off",
        }
        self.state = root / "state"

    def client(self) -> RpcClient:
        client = RpcClient.start(
            [CONTEXTLS, "connect", "--stdio"], cwd=self.workspace, env=self.env
        )
        reply = client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "capabilities": {},
                "workspaceFolders": [{"uri": self.workspace.as_uri(), "name": self.workspace.name}],
            },
        )
        assert "result" in reply, reply
        client.send(notification("initialized", {}))
        return client

    def prepared(self) -> bool:
        """The daemon's log says a workspace's map is prepared."""
        return any(
            "is prepared" in log.read_text(errors="replace") for log in self.state.rglob("*.log")
        )

    def pid(self, client: RpcClient) -> int:
        return int(client.result("contextls/serverInfo", {})["pid"])

    def stop(self) -> None:
        subprocess.run(
            [CONTEXTLS, "daemon", "stop"], env=self.env, cwd=self.workspace, capture_output=True
        )
        shutil.rmtree(self.runtime, ignore_errors=True)


def proc_mb(pid: int, where: str, key: str) -> float:
    """The figure ``key`` of ``/proc/PID/where``, in MB (0 when the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/{where}").read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def rss_mb(pid: int) -> float:
    return proc_mb(pid, "status", "VmRSS:")


def pss_mb(pid: int) -> float:
    """Proportional set size: shared pages split between their sharers (a process that
    forks to run ``git`` would otherwise count twice until it execs)."""
    return proc_mb(pid, "smaps_rollup", "Pss:")


def tree_pss_mb(pid: int) -> float:
    """PSS of ``pid`` and every process under it."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents.setdefault(int(stat.rpartition(")")[2].split()[1]), []).append(int(entry.name))
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        total += pss_mb(current)
        todo.extend(parents.get(current, []))
    return total


class Peaks:
    """The peak RSS of the daemon, and PSS of the daemon with its processes, in MB, as
    sampled."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.rss = 0.0
        self.pss = 0.0

    def sample(self) -> None:
        self.rss = max(self.rss, rss_mb(self.pid))
        self.pss = max(self.pss, tree_pss_mb(self.pid))


def probe(other: RpcClient, until: Callable[[], bool]) -> tuple[list[float], list[float]]:
    """Round trips of ``status`` and ``addText`` in turn, at least once, until ``until()``."""
    status: list[float] = []
    adds: list[float] = []
    while True:
        began = time.perf_counter()
        other.result("contextls/status", {})
        status.append(time.perf_counter() - began)
        began = time.perf_counter()
        other.result("contextls/addText", {"kind": "text", "content": f"probe note {len(adds)}"})
        adds.append(time.perf_counter() - began)
        if until():
            return status, adds


def during(
    heavy: RpcClient, other: RpcClient, pid: int, method: str, params: Any, again: bool
) -> tuple[dict[str, Any], float, int, list[float], list[float], tuple[float, float]]:
    """Send ``method`` on ``heavy``; probe with ``other`` while it runs (``again``: send
    it again as soon as it is answered, until the probe made ``MIN_ROUNDS`` round trips).
    The first answer, its time, how many were sent, the probe's round trips, and the peak
    RSS of the daemon and of the daemon with its processes."""
    answers: list[dict[str, Any]] = []
    took: list[float] = []
    peaks = Peaks(pid)
    done = threading.Event()
    enough = threading.Event()

    def run() -> None:
        while True:
            began = time.perf_counter()
            answers.append(heavy.request(method, params, timeout=900))
            took.append(time.perf_counter() - began)
            if not again or enough.is_set():
                break
        done.set()

    thread = threading.Thread(target=run)
    thread.start()
    rounds = [0]

    def finished() -> bool:
        peaks.sample()
        rounds[0] += 1
        if rounds[0] >= MIN_ROUNDS:
            enough.set()
        return done.is_set()

    status, adds = probe(other, finished)
    thread.join()
    return answers[0], took[0], len(answers), status, adds, (peaks.rss, peaks.pss)


def churning(
    other: RpcClient, pid: int, lib: Path, seconds: float
) -> tuple[int, list[float], list[float], tuple[float, float]]:
    """Probe with ``other`` while ``CHURN_PER_SECOND`` files of ``lib`` change each second
    for ``seconds`` (a definition appended: the live map in the window ranks them again).
    How many changed, the probe's round trips, and the peak RSS of the daemon and of the
    daemon with its processes."""
    files = sorted(lib.rglob("*.py"))
    stop = threading.Event()
    changed = [0]

    def churn() -> None:
        chosen = random.Random(3)
        began = time.perf_counter()
        while not stop.is_set():
            n = changed[0]
            with files[chosen.randrange(len(files))].open("a") as file:
                file.write(f"\n\ndef churned_{n}():\n    return {n}\n")
            changed[0] = n + 1
            time.sleep(max(0.0, began + (n + 1) / CHURN_PER_SECOND - time.perf_counter()))

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        status, adds, peaks = probe_for(other, pid, seconds)
    finally:
        stop.set()
        thread.join()
    return changed[0], status, adds, peaks


def disk_hog(
    other: RpcClient, pid: int, folder: Path, seconds: float
) -> tuple[int, list[float], list[float], tuple[float, float]]:
    """Probe with ``other`` while another program writes ``HOG_MEGABYTES`` and syncs them,
    again and again, for ``seconds`` (a build, a copy: the daemon's commits and
    checkpoints share the disk with it). How many it wrote, the probe's round trips,
    and the peak RSS of the daemon and of the daemon with its processes."""
    target = folder / "disk-hog"
    loop = (
        f"while true; do dd if=/dev/zero of={target} bs=1M count={HOG_MEGABYTES} "
        "conv=fsync status=none; echo; done"
    )
    hog = subprocess.Popen(
        ["bash", "-c", loop], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        status, adds, peaks = probe_for(other, pid, seconds)
    finally:
        os.killpg(hog.pid, signal.SIGKILL)  # the loop and the dd it runs
        written = (hog.communicate()[0] or "").count("\n")
        target.unlink(missing_ok=True)
    return written, status, adds, peaks


def probe_for(
    other: RpcClient, pid: int, seconds: float
) -> tuple[list[float], list[float], tuple[float, float]]:
    """The probe's round trips with ``other`` for ``seconds``, and the peak RSS of the
    daemon and of the daemon with its processes meanwhile."""
    peaks = Peaks(pid)
    end = time.perf_counter() + seconds

    def finished() -> bool:
        peaks.sample()
        return time.perf_counter() >= end

    status, adds = probe(other, finished)
    return status, adds, (peaks.rss, peaks.pss)


def probed(
    name: str,
    took: str,
    status: list[float],
    adds: list[float],
    peaks: tuple[float, float],
    idle_a99: float,
) -> tuple[list[str], list[Row]]:
    """The table's line for what ``name`` ran (``took``: how long, said), and its verdict
    rows: another client's ``status`` p99 and its ``addText`` p99 against idle."""
    s99, a99 = percentile(status, 99), percentile(adds, 99)
    line = [
        name,
        took,
        f"{percentile(status, 50) * 1e3:.1f} / {s99 * 1e3:.1f} ms",
        f"{percentile(adds, 50) * 1e3:.1f} / {a99 * 1e3:.1f} ms",
        f"{peaks[0]:.0f} / {peaks[1]:.0f} MB",
    ]
    rows = [
        ratio_row(f"{name}: other's status p99 (s)", s99 * 1e9, 0.2e9, 1.0),
        ratio_row(f"{name}: other's addText p99 / idle", a99 * 1e9, idle_a99 * 1e9, 5.0),
    ]
    return line, rows


def rss_row(name: str, peak: float) -> Row:
    return Row(name, f"{peak:.0f} MB", "400 MB", None, "<= 400 MB", peak <= 400)


def hostile_files(workspace: Path) -> None:
    (workspace / "brackets.py").write_text("[" * 100_000)
    body = "".join(
        f"def function_{n}(value, other=None):\n    '''Number {n}.'''\n    return value + {n}\n\n"
        for n in range(12_000)
    )
    (workspace / "big_module.py").write_text(body[:900_000])


async def run(cfg: Config) -> list[Row]:
    root = Path(tempfile.mkdtemp(prefix="cls-stall-"))
    daemon: Daemon | None = None
    try:
        repo = root / "cpython"
        lib = cpython_lib(repo)
        hostile_files(repo)
        floor = min(parse_floor(lib) for _ in range(cfg.pick(2, 1)))
        files = sum(1 for _ in lib.rglob("*.py"))
        print(f"Bench 16: {files:,} files of CPython's Lib/; parse {floor:.2f} s", flush=True)
        daemon = Daemon(root, repo)
        heavy, other = daemon.client(), daemon.client()
        pid = daemon.pid(other)
        other.result(
            "contextls/configure", {"settings": {"maxItems": 1000, "maxTokens": 2_000_000}}
        )
        rounds = iter(range(cfg.pick(200, 40)))
        idle_status, idle_adds = probe(other, lambda: next(rounds, None) is None)
        # The control: the same probe while two processes outside the daemon keep both
        # cores busy (what the machine itself adds to a round trip when the work is
        # elsewhere; the rows below are read against it as well as against idle).
        rounds = iter(range(cfg.pick(200, 40)))
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
        try:
            busy_status, busy_adds = probe(other, lambda: next(rounds, None) is None)
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
        seconds = float(cfg.pick(20, 5))
        written, hog_status, hog_adds, hog_peaks = disk_hog(other, pid, root, seconds)
        scenarios: list[tuple[str, str, Any]] = [
            # Pinned: the probe's notes would push it out of the window before the churn.
            ("map of Lib/", "contextls/addMap", {"query": "parse an email header", "pin": True}),
        ]
        prose = ("The quick brown fox jumps over the lazy dog, again and again. " * 17_000)[
            : 1 << 20
        ]
        later: list[tuple[str, str, Any]] = [
            ("map after one change", "contextls/addMap", {"query": "parse an email header"}),
            (
                "symbolAt, 100k unclosed [",
                "contextls/symbolAt",
                {"uri": (repo / "brackets.py").as_uri(), "position": {"line": 0, "character": 5}},
            ),
            (
                "addSymbolByName, 100k [",
                "contextls/addSymbolByName",
                {"uri": (repo / "brackets.py").as_uri(), "name": "f"},
            ),
            (
                "count 1 MiB, claude-opus-4.7",
                "contextls/countTokens",
                {"text": prose, "models": ["claude-opus-4.7"]},
            ),
            ("count 1,000,000 spaces", "contextls/countTokens", {"text": " " * 1_000_000}),
            (
                # A run just short of the length counted by its period: an expression
                # that looked for such runs scanned it again from each character.
                "count 4 runs of 65,535 é",
                "contextls/countTokens",
                {"text": ("é" * 65_535 + " ") * 4},
            ),
            (
                "outline of a 900 KB file",
                "contextls/addFile",
                {"uri": (repo / "big_module.py").as_uri(), "outline": True},
            ),
            (
                # The window counts in Claude's tokens from here on (set just before).
                "addText of 800 KB, claude-opus-4.7",
                "contextls/addText",
                {"kind": "text", "content": prose[:800_000]},
            ),
        ]
        rows: list[Row] = []
        table: list[list[str]] = []
        idle_s99, idle_a99 = percentile(idle_status, 99), percentile(idle_adds, 99)
        table.append(
            [
                "idle",
                "-",
                f"{percentile(idle_status, 50) * 1e3:.1f} / {idle_s99 * 1e3:.1f} ms",
                f"{percentile(idle_adds, 50) * 1e3:.1f} / {idle_a99 * 1e3:.1f} ms",
                "-",
            ]
        )
        table.append(
            [
                "control: both cores busy outside",
                "-",
                f"{percentile(busy_status, 50) * 1e3:.1f} / "
                f"{percentile(busy_status, 99) * 1e3:.1f} ms",
                f"{percentile(busy_adds, 50) * 1e3:.1f} / {percentile(busy_adds, 99) * 1e3:.1f} ms",
                "-",
            ]
        )
        hog_line, hog_rows = probed(
            f"another program writing {HOG_MEGABYTES} MB and syncing, again",
            f"{seconds:.0f} s ({written * HOG_MEGABYTES:,} MB)",
            hog_status,
            hog_adds,
            hog_peaks,
            idle_a99,
        )
        table.append(hog_line)
        rows += hog_rows
        answered = 0
        for name, method, params in scenarios + later:
            again = method in ("contextls/countTokens", "contextls/symbolAt") or name.startswith(
                "addSymbolByName"
            )
            if name.startswith("addText of 800 KB"):
                heavy.result("contextls/configure", {"settings": {"model": "claude-opus-4.7"}})
            if name == "map after one change":
                changed = lib / "email" / "header.py"
                changed.write_text(
                    changed.read_text() + "\n\ndef added_for_the_bench():\n    pass\n"
                )
            answer, took, sent, status, adds, (peak, peak_all) = during(
                heavy, other, pid, method, params, again
            )
            answered += 1
            outcome = (
                "answered" if "result" in answer else f"error {answer.get('error', {}).get('code')}"
            )
            said = f"{took:.2f} s ({outcome}{f', x{sent}' if sent > 1 else ''})"
            line, verdicts = probed(name, said, status, adds, (peak, peak_all), idle_a99)
            table.append(line)
            rows += verdicts
            rows.append(
                ratio_row(
                    f"{name}: other's addText p99 / control",
                    percentile(adds, 99) * 1e9,
                    percentile(busy_adds, 99) * 1e9,
                    None,
                )
            )
            if name == "map of Lib/":
                rows.append(ratio_row("first map / parse of Lib/", took * 1e9, floor * 1e9, 1.5))
                rows.append(rss_row("daemon RSS during the map", peak))
                rows.append(
                    Row(
                        "the daemon and its processes during the map (PSS)",
                        f"{peak_all:.0f} MB",
                        "-",
                        None,
                        "-",
                        None,
                    )
                )
            if name == "map after one change":
                rows.append(
                    ratio_row("map after one change / parse of Lib/", took * 1e9, floor * 1e9, 0.1)
                )
                seconds = float(cfg.pick(20, 5))
                changes, status, adds, peaks = churning(other, pid, lib, seconds)
                churned = f"map in the window, {CHURN_PER_SECOND} files/s changing"
                said = f"{seconds:.0f} s ({changes:,} changes)"
                line, verdicts = probed(churned, said, status, adds, peaks, idle_a99)
                table.append(line)
                rows += [*verdicts, rss_row(f"{churned}: daemon RSS", peaks[0])]
        print_table(
            [
                "while",
                "took",
                "other's status p50 / p99",
                "other's addText p50 / p99",
                "RSS daemon / PSS all",
            ],
            table,
            "Bench 16: another client's round trips while one works",
        )
        rows.append(
            Row(
                "requests answered",
                f"{answered}",
                f"{len(scenarios) + len(later)}",
                None,
                "all",
                answered == len(scenarios) + len(later),
            )
        )
        heavy.kill()
        other.kill()
        daemon.stop()
        daemon = None
        rows += prepared_map(root / "prepared", repo, floor, idle_a99)
        return rows
    finally:
        if daemon is not None:
            daemon.stop()
        shutil.rmtree(root, ignore_errors=True)


def prepared_map(root: Path, repo: Path, floor: float, idle_a99: float) -> list[Row]:
    """A daemon that prepares maps: another client's round trips while it prepares the
    map of ``repo`` (nobody asked), then the first map asked once it is prepared."""
    root.mkdir()
    daemon = Daemon(root, repo, prepare=True)
    try:
        heavy, other = daemon.client(), daemon.client()
        began = time.perf_counter()
        status, adds = probe(other, daemon.prepared)
        preparing = time.perf_counter() - began
        began = time.perf_counter()
        answer = heavy.request("contextls/addMap", {"query": "parse an email header"}, timeout=900)
        took = time.perf_counter() - began
        assert "result" in answer, answer
        s99, a99 = percentile(status, 99), percentile(adds, 99)
        print(
            f"prepared maps: the preparation ~{preparing:.2f} s (other's status / addText p99 "
            f"{s99 * 1e3:.1f} / {a99 * 1e3:.1f} ms over {len(status)} rounds), then the first "
            f"map {took:.2f} s",
            flush=True,
        )
        heavy.kill()
        other.kill()
        return [
            ratio_row("preparing the map: other's status p99 (s)", s99 * 1e9, 0.2e9, 1.0),
            ratio_row(
                "preparing the map: other's addText p99 / idle", a99 * 1e9, idle_a99 * 1e9, 5.0
            ),
            ratio_row("first map, prepared / parse of Lib/", took * 1e9, floor * 1e9, 1.5),
        ]
    finally:
        daemon.stop()


if __name__ == "__main__":
    bench_main(run, "Bench 16: no stall")
