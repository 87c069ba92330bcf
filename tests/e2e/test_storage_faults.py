"""A full disk and a read-only file system, for real: a small tmpfs mounted for the test.

Mounting needs root (CAP_SYS_ADMIN); without it these tests are skipped, and
``tests/unit/test_service.py`` still checks the same paths in process with
SQLite's own ``max_page_count`` and an injected commit failure.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextls.protocol import ErrorCode
from tests.support.rpc import frame, request

from .rawio import RawServers, RawStdio


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir()
    if os.geteuid() != 0 or not _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)):
        pytest.skip("mounting a tmpfs needs root; the in-process tests cover this path")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs, unmounted at the end."""
    yield from _tmpfs(tmp_path / "small", "2m")


@pytest.fixture
def twelve_mib_disk(tmp_path: Path) -> Iterator[Path]:
    """A 12 MiB tmpfs: room for a window of a few MiB, whose clear outgrows SQLite's page
    cache, so the disk runs out in the middle of a transaction, not at its commit."""
    yield from _tmpfs(tmp_path / "twelve", "12m")


def fill(disk: Path) -> Path:
    """Take every free byte of ``disk``; returns the filler, to unlink."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 4096)
        except OSError:
            pass
    return filler


def start(root: Path, storage: Path, servers: list[RawStdio], **options: object) -> RawStdio:
    server = RawServers(root, storage)({"maxItems": 1000, "maxTokens": 10_000_000, **options})
    servers.append(server)
    return server


@pytest.fixture
def started() -> Iterator[list[RawStdio]]:
    servers: list[RawStdio] = []
    yield servers
    for server in servers:
        server.kill()


def saved_contents(storage: Path, root: Path, tmp_path: Path) -> list[str]:
    """What the database holds, read from a copy outside the small disk."""
    copy = tmp_path / "copy"
    copy.mkdir(exist_ok=True)
    for suffix in ("", "-wal"):
        source = storage.with_name(storage.name + suffix)
        if source.exists():
            shutil.copy(source, copy / (storage.name + suffix))
    db = sqlite3.connect(copy / storage.name)
    try:
        rows = db.execute(
            "SELECT content FROM items WHERE root = ? ORDER BY seq", (root.as_uri(),)
        ).fetchall()
    finally:
        db.close()
    return [row[0] for row in rows]


def test_full_disk_refuses_the_add_and_loses_nothing_answered(
    small_disk: Path, workspace: Path, tmp_path: Path, started: list[RawStdio]
) -> None:
    storage = small_disk / "context.sqlite3"
    server = start(workspace, storage, started)
    answered: list[str] = []
    refusals = []
    for n in range(400):
        content = f"note {n} " + "payload " * 500
        reply = server.request("contextls/addText", {"content": content})
        if "result" in reply:
            answered.append(content)
        else:
            refusals.append(reply["error"])
            if len(refusals) >= 3:
                break
    assert refusals, "the 2 MiB disk never filled up"
    assert all(error["code"] == ErrorCode.STORAGE for error in refusals)
    assert "full" in refusals[0]["message"]
    # It keeps serving reads, and what it lists is what was answered.
    listed = [item["content"] for item in server.result("contextls/list")["items"]]
    assert listed == answered
    assert server.result("contextls/status")["itemCount"] == len(answered)
    assert server.shutdown_and_exit() == 0
    assert saved_contents(storage, workspace, tmp_path) == answered


def test_a_pipelined_change_is_never_answered_when_the_disk_fills_after_it(
    twelve_mib_disk: Path, workspace: Path, tmp_path: Path, started: list[RawStdio]
) -> None:
    """``[addText A, clear]`` in one write on a full disk: SQLite rolls the whole burst's
    transaction back when the clear finds no room, A included, so A must not be answered
    as added (it was, and was gone)."""
    storage = twelve_mib_disk / "context.sqlite3"
    server = start(workspace, storage, started)
    page = "lorem ipsum dolor " * 6000
    kept = [f"note {n} {page}" for n in range(40)]
    for content in kept:
        server.result("contextls/addText", {"content": content})
    filler = fill(twelve_mib_disk)
    server.write(
        frame(request(900, "contextls/addText", {"content": "note A"}))
        + frame(request(901, "contextls/clear", {}))
    )
    answers: dict[int, dict[str, Any]] = {}
    while len(answers) < 2:
        message = server.read()
        if message.get("id") in (900, 901):
            answers[message["id"]] = message
    filler.unlink()
    listed = [item["content"] for item in server.result("contextls/list")["items"]]
    assert server.shutdown_and_exit() == 0
    saved = saved_contents(storage, workspace, tmp_path)
    assert "error" in answers[901], "the disk was not full when the clear ran"
    assert answers[901]["error"]["code"] == ErrorCode.STORAGE
    # Whatever was answered as added is there; here A went with the clear's transaction.
    assert ("result" in answers[900]) == ("note A" in saved), answers[900]
    assert answers[900]["error"]["code"] == ErrorCode.STORAGE, answers[900]
    assert "full" in answers[900]["error"]["message"]
    assert listed == saved == kept


def test_cli_exits_non_zero_when_the_disk_is_full(
    small_disk: Path, workspace: Path, tmp_path: Path
) -> None:
    storage = small_disk / "context.sqlite3"
    filler = small_disk / "filler"
    env = {**os.environ, "CONTEXTLS_STORAGE": str(storage)}
    command = [sys.executable, "-m", "contextls_client.cli", "--workspace", str(workspace)]
    first = subprocess.run(
        [*command, "add-text", "first"], env=env, capture_output=True, text=True, timeout=60
    )
    assert first.returncode == 0, first.stderr
    raised = subprocess.run(
        [*command, "config", "set", "maxTokens", "10000000"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert raised.returncode == 0, raised.stderr
    # Fill what is left of the disk, then add more than every file SQLite holds there
    # (free pages and a WAL it may reuse): the add itself needs new bytes on the disk.
    with open(filler, "wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 4096)
        except OSError:
            pass
    held = sum(path.stat().st_size for path in small_disk.iterdir() if path != filler)
    words = [f"second{n}" for n in range(held // 8 + 4096)]
    second = subprocess.run(
        [*command, "add-text", "-"],
        input=" ".join(words),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 1, (second.stdout, second.stderr)
    assert "added" not in second.stdout
    assert "is full" in second.stderr, second.stderr
    forget = subprocess.run(
        [*command, "forget", "--query", "first", "--yes"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    # Forgetting is what makes room: it works on the full disk (the reserve beside the
    # database is given back for it).
    assert forget.returncode == 0, forget.stderr
    listed = subprocess.run([*command, "ls"], env=env, capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert "first" not in listed.stdout and "second" not in listed.stdout, listed.stdout
    filler.unlink()
    # The daemon holds the database open: stop it before the disk goes away.
    subprocess.run([*command, "daemon", "stop"], env=env, capture_output=True, timeout=60)


def test_read_only_file_system_serves_reads_and_refuses_changes(
    small_disk: Path, workspace: Path, started: list[RawStdio]
) -> None:
    storage = small_disk / "context.sqlite3"
    server = start(workspace, storage, started, maxItems=2)
    for n in range(4):
        server.result("contextls/addText", {"content": f"zebra note {n}"})
    assert server.shutdown_and_exit() == 0
    if not _mount("-o", "remount,ro", str(small_disk)):
        pytest.skip("cannot remount the tmpfs read-only here")
    try:
        reader = start(workspace, storage, started, maxItems=2)
        listed = [item["content"] for item in reader.result("contextls/list")["items"]]
        assert listed == ["zebra note 2", "zebra note 3"]
        hits = reader.result("contextls/search", {"query": "zebra"})["hits"]
        assert {hit["item"]["content"] for hit in hits} == {"zebra note 0", "zebra note 1"}
        assert reader.result("contextls/status")["itemCount"] == 2
        refused = reader.request("contextls/addText", {"content": "cannot be saved"})
        assert refused["error"]["code"] == ErrorCode.STORAGE
        assert "read-only" in refused["error"]["message"]
        forget = reader.request("contextls/forget", {"query": "zebra"})
        assert forget["error"]["code"] == ErrorCode.STORAGE, forget
        assert "read-only" in forget["error"]["message"]
        assert reader.result("contextls/status")["itemCount"] == 2
        assert reader.shutdown_and_exit() == 0
    finally:
        _mount("-o", "remount,rw", str(small_disk))


def test_garbage_over_the_database_loses_nothing_acknowledged(
    workspace: Path, tmp_path: Path, started: list[RawStdio]
) -> None:
    storage = tmp_path / "context.sqlite3"
    server = start(workspace, storage, started)
    contents = [f"acknowledged {n}" for n in range(40)]
    for content in contents:
        server.result("contextls/addText", {"content": content})
    # Somebody writes over the file while the server runs.
    with open(storage, "r+b") as file:
        file.write(os.urandom(64 * 1024))
    status = server.result("contextls/status")  # the next request notices
    assert status["itemCount"] == 40
    warnings = [
        m["params"]["message"] for m in server.seen if m.get("method") == "window/showMessage"
    ]
    assert any("overwritten" in warning for warning in warnings), warnings
    server.result("contextls/addText", {"content": "after the damage"})
    assert server.shutdown_and_exit() == 0
    assert list(tmp_path.glob("context.sqlite3.damaged-*"))
    again = start(workspace, storage, started)
    listed = [item["content"] for item in again.result("contextls/list")["items"]]
    assert listed == [*contents, "after the damage"]
