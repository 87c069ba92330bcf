"""Bench 17: no stall, the requests that read or write a lot.

Bench 16 holds the daemon to its figures while it maps, parses hostile files and counts
long texts; this one goes through the other requests a person or an agent sends on a
large window and a large archive, where each held every client once: the first search
of a process (its model loads), a search with a pasted 10,000-character log as its
query, a fill of 2,000 notes into an archive, a forget by query while its items are
embedded, an import of the archive into another folder, an add of ~400 files of
CPython's ``Lib/`` (7 MB), a render of that window, a refresh of it, the window shown
as outlines and whole again, a dry run of a change to Claude's tokens (the window
counted in them), a conversation of 500 messages prepared in Claude's tokens, and a
clear of the window.

Two editor-like clients (``contextls connect --stdio``) on one daemon: while the first
sends the request, the second sends ``status`` round trips until it is answered (at
least ``MIN_ROUNDS``: a quick request is sent again). Figures: the request's time, the
other's ``status`` p50 / p99 / max against idle (measured in the same run), and that
every request was answered exactly once. Target: status p99 <= 0.2 s during each.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bench_stall
from _harness import Config, bench_main
from _stats import Row, percentile, print_table, ratio_row
from bench_stall import CONTEXTLS, cpython_lib

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.support.rpc import RpcClient, notification, request

MIN_ROUNDS = 40
"""The other client's round trips a quick request is sent again for."""
PACKAGES = ("idlelib", "unittest", "asyncio", "email")
"""Beside ``Lib/*.py``, the packages of the large window (~400 files, 7 MB)."""


class Daemon:
    """A daemon of the bench's own (its folders in ``root``: bench 16's), and two clients
    that open every folder of ``folders``."""

    def __init__(self, root: Path, folders: list[Path]) -> None:
        self.daemon = bench_stall.Daemon(root, folders[0])
        self.env = self.daemon.env
        self.folders = folders
        self.heavy, self.other = self.client(), self.client()

    def client(self) -> RpcClient:
        client = RpcClient.start(
            [CONTEXTLS, "connect", "--stdio"], cwd=self.folders[0], env=self.env
        )
        folders = [{"uri": folder.as_uri(), "name": folder.name} for folder in self.folders]
        reply = client.request(
            "initialize",
            {"processId": os.getpid(), "capabilities": {}, "workspaceFolders": folders},
            timeout=120,
        )
        assert "result" in reply, reply
        client.send(notification("initialized", {}))
        return client

    def status_times(self, folder: Path, until: Callable[[int], bool]) -> list[float]:
        """The other client's ``status`` round trips until ``until(rounds so far)``."""
        times: list[float] = []
        while True:
            began = time.perf_counter()
            self.other.result("contextls/status", {"workspace": str(folder)})
            times.append(time.perf_counter() - began)
            if until(len(times)):
                return times

    def during(
        self, folder: Path, work: Callable[[threading.Event], float]
    ) -> tuple[float, list[float]]:
        """``work(enough)`` in a thread (its seconds), the other's ``status`` meanwhile;
        ``enough`` is set once the probe made ``MIN_ROUNDS`` round trips."""
        took: list[float] = []
        enough = threading.Event()
        thread = threading.Thread(target=lambda: took.append(work(enough)))
        thread.start()

        def finished(rounds: int) -> bool:
            if rounds >= MIN_ROUNDS:
                enough.set()
            return not thread.is_alive()

        times = self.status_times(folder, finished)
        thread.join()
        return took[0], times

    def request(
        self, folder: Path, method: str, params: dict[str, Any], again: bool = False
    ) -> tuple[float, list[float], dict[str, Any]]:
        """``method`` on the heavy client (sent again while ``again`` and the probe wants
        more rounds): the first's seconds, the probe's round trips, the first answer."""
        answers: list[dict[str, Any]] = []

        def work(enough: threading.Event) -> float:
            first = 0.0
            while True:
                began = time.perf_counter()
                answers.append(self.heavy.request(method, params, timeout=900))
                first = first or time.perf_counter() - began
                if not again or enough.is_set():
                    return first

        took, times = self.during(folder, work)
        return took, times, answers[0]

    def burst(self, workspace: str, pieces: list[str], chars: int) -> float:
        """The heavy client adds the first ``chars`` of each piece, all in one write (a
        client that pipelines); seconds until the last is answered."""
        began = time.perf_counter()
        ids = [self.heavy.new_id() for _ in pieces]
        self.heavy.send(*(
            request(msg_id, "contextls/addText", {"workspace": workspace, "content": piece[:chars]})
            for msg_id, piece in zip(ids, pieces, strict=True)
        ))  # fmt: skip
        for msg_id in ids:
            self.heavy.reply_to(msg_id, timeout=900)
        return time.perf_counter() - began

    def answered_once(self) -> bool:
        """Every request of both clients got exactly one answer."""
        for client in (self.heavy, self.other):
            counts: dict[Any, int] = {}
            for message in client.seen:
                if "method" not in message and "id" in message:
                    counts[message["id"]] = counts.get(message["id"], 0) + 1
            sent = client.new_id() - 1
            if set(counts) != set(range(1, sent + 1)) or any(n != 1 for n in counts.values()):
                return False
        return True

    def stop(self) -> None:
        for client in (self.heavy, self.other):
            client.kill()
        self.daemon.stop()


def notes(count: int, lib: Path) -> list[str]:
    """``count`` notes of ~2 KB, pieces of the standard library's code in turn."""
    code = "".join(path.read_text() for path in sorted(lib.glob("*.py"))[:80])
    return [f"note {n}: {code[n * 2_000 : (n + 1) * 2_000]}" for n in range(count)]


async def run(cfg: Config) -> list[Row]:
    root = Path(tempfile.mkdtemp(prefix="cls-b17-"))
    repo = root / "cpython"
    lib = cpython_lib(repo)
    notes_folder, imported = root / "notes", root / "imported"
    notes_folder.mkdir()
    imported.mkdir()
    daemon = Daemon(root, [repo, notes_folder, imported])
    table: list[list[str]] = []
    rows: list[Row] = []
    idle = daemon.status_times(repo, lambda rounds: rounds >= 200)
    idle99 = percentile(idle, 99)
    table.append(["idle", "-", *_latency(idle)])

    def row(name: str, took: float, times: list[float]) -> None:
        table.append([name, f"{took:.2f} s", *_latency(times)])
        rows.append(ratio_row(f"{name}: other's status p99 (s)", percentile(times, 99) * 1e9,
                              0.2e9, 1.0))  # fmt: skip

    try:
        nw = str(notes_folder)
        long_query = " ".join((lib / "email" / "header.py").read_text().split())[:10_000]
        took, times, _ = daemon.request(
            notes_folder, "contextls/search", {"workspace": nw, "query": "retry the upload"}
        )
        row("the first search of the process (its model loads)", took, times)
        daemon.heavy.result("contextls/configure", {"workspace": nw, "settings": {"maxItems": 5}})
        pieces = notes(cfg.pick(2_000, 600), lib)

        def fill(enough: threading.Event) -> float:
            began = time.perf_counter()
            for piece in pieces:
                daemon.heavy.result("contextls/addText", {"workspace": nw, "content": piece})
            return time.perf_counter() - began

        took, times = daemon.during(notes_folder, fill)
        row(f"{len(pieces):,} notes added, all but 5 archived", took, times)
        took, times = daemon.during(notes_folder, lambda _: daemon.burst(nw, pieces[:100], 500))
        row("100 notes of 500 characters in one write", took, times)
        for mode in ("keyword", "hybrid"):
            params = {"workspace": nw, "query": long_query, "mode": mode}
            took, times, _ = daemon.request(notes_folder, "contextls/search", params, again=True)
            row(f"search ({mode}), a 10,000-character query", took, times)
        document = daemon.heavy.result("contextls/export", {"workspace": nw, "archive": True})
        params = {"workspace": str(imported), "document": document}
        took, times, _ = daemon.request(imported, "contextls/import", params)
        row(f"import of {len(document['archive']):,} archived items", took, times)
        params = {"workspace": nw, "query": "self"}
        took, times, forgot = daemon.request(notes_folder, "contextls/forget", params)
        forgotten = len(forgot.get("result", {}).get("forgotten", []))
        row(f"forget by query ({forgotten:,} items, then the scrub)", took, times)

        w = str(repo)
        daemon.heavy.result(
            "contextls/configure",
            {"workspace": w, "settings": {"maxItems": 1_000, "maxTokens": 2_000_000}},
        )
        targets = [{"glob": "Lib/*.py"}, *({"uri": str(lib / p)} for p in PACKAGES)]
        params = {"workspace": w, "targets": targets, "force": True}
        took, times, added = daemon.request(repo, "contextls/addFiles", params)
        files = len(added["result"]["items"])
        row(f"add of {files} files of Lib/", took, times)
        took, times, _ = daemon.request(repo, "contextls/render", {"workspace": w}, again=True)
        row(f"render of those {files} files", took, times)
        params = {"workspace": w, "ids": [item["id"] for item in added["result"]["items"]]}
        took, times, _ = daemon.request(repo, "contextls/refresh", params, again=True)
        row(f"refresh of those {files} files (unchanged)", took, times)
        # The files that define functions: each has a body an outline hides.
        ids = [item["id"] for item in added["result"]["items"] if "\ndef " in item["content"]]
        for view in ("outline", "whole"):
            params = {"workspace": w, "ids": ids, "view": view}
            took, times, answer = daemon.request(repo, "contextls/setView", params)
            row(f"{len(ids)} of them shown {view}" + ("" if "result" in answer else " (refused)"),
                took, times)  # fmt: skip
        params = {"workspace": w, "settings": {"model": "claude-opus-4.7"}, "dryRun": True}
        took, times, _ = daemon.request(repo, "contextls/configure", params)
        row("a dry run of Claude's tokens for that window", took, times)
        messages = [
            {"role": "user" if n % 2 == 0 else "assistant", "content": piece}
            for n, piece in enumerate(notes(500, lib))
        ]
        daemon.heavy.result("contextls/configure", {"workspace": nw,
                            "settings": {"model": "claude-opus-4.7"}, "force": True})  # fmt: skip
        params = {"workspace": nw, "messages": messages, "contextWindow": 200_000}
        took, times, _ = daemon.request(notes_folder, "contextls/prepareConversation", params)
        row("500 messages of 2 KB prepared in Claude's tokens", took, times)
        took, times, _ = daemon.request(repo, "contextls/clear", {"workspace": w})
        row(f"clear of the {files} files (archived)", took, times)
        once = daemon.answered_once()
    finally:
        daemon.stop()
        shutil.rmtree(root, ignore_errors=True)
    print_table(
        ["while", "it took", "other's status p50", "p99", "max"],
        table,
        "Bench 17: another client's status while one reads or writes a lot",
    )
    return [
        *rows,
        Row("every request answered exactly once", "yes" if once else "NO", "-", None, "yes", once),
        Row("idle status p99", f"{idle99 * 1e3:.1f} ms", "-", None, "-", None),
    ]


def _latency(times: list[float]) -> list[str]:
    return [f"{percentile(times, q) * 1e3:.1f} ms" for q in (50, 99)] + [
        f"{max(times) * 1e3:.1f} ms"
    ]


if __name__ == "__main__":
    bench_main(run, "Bench 17: no stall, requests that read or write a lot")
