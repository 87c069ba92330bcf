"""The maps' own process, without a daemon: what it keeps, and that it ends when idle.

The daemon's side is tested over LSP in ``tests/e2e/test_no_stall.py`` (a map of a
repository leaves room for another client; a map whose process dies is answered).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from contextls.app import code_index
from contextls.app.map_messages import PROGRESS, MapRequest, Preparation, Prepared
from contextls.app.map_process import MapProcess
from contextls.app.map_ranker import KEPT_WORKSPACES, _Ranker
from contextls.app.workers import Workers, for_maps
from contextls.core.items import Item


def workspace(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "core.py").write_text(f"def {name}_helper(value):\n    return value\n")
    (folder / "app.py").write_text(f"from core import {name}_helper\n\n{name}_helper(1)\n")
    return folder


def repository(folder: Path) -> Path:
    """``folder`` made a git repository (only what git lists is prepared)."""
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def request(folder: Path) -> MapRequest:
    empty: frozenset[Any] = frozenset()
    return MapRequest(str(folder), 1_000_000, None, 256, empty, empty, empty, "o200k_base")


SHAPE = Item("ctx-1", "custom", "", {"title": "map of the repository"}, 0, 0)


def test_the_maps_parse_with_half_the_cores_two_at_least_four_at_most() -> None:
    assert [for_maps(cores) for cores in (1, 2, 4, 6, 8, 64)] == [2, 2, 2, 3, 4, 4]
    # Never more workers than cores this process may run on.
    assert Workers(for_maps(1)).processes <= (os.cpu_count() or 1)


async def test_a_git_workspace_s_next_map_follows_what_git_lists(tmp_path: Path) -> None:
    """The listing is made again only when git's changes: a file added, one ignored and
    one renamed each change the next map."""
    folder = repository(workspace(tmp_path, "listed"))
    ranker = _Ranker(Unread(), Workers())  # type: ignore[arg-type]
    try:
        first = await ranker._rank(1, request(folder), None, SHAPE)
        assert "listed_helper" in first.text
        (folder / "extra.py").write_text("def extra_helper():\n    return 1\n")
        (folder / "app.py").write_text("from extra import extra_helper\n\nextra_helper()\n")
        added = await ranker._rank(2, request(folder), None, SHAPE)
        assert "def extra_helper" in added.text
        (folder / ".gitignore").write_text("extra.py\n")
        ignored = await ranker._rank(3, request(folder), None, SHAPE)
        assert "extra_helper" not in ignored.text and "listed_helper" in ignored.text
        (folder / "core.py").rename(folder / "renamed.py")
        renamed = await ranker._rank(4, request(folder), None, SHAPE)
        assert "renamed.py:" in renamed.text and "core.py:" not in renamed.text
    finally:
        ranker.workers.close()


async def test_an_idle_map_process_ends_and_the_next_map_starts_it_again(tmp_path: Path) -> None:
    folder = workspace(tmp_path, "first")
    maps = MapProcess(idle_seconds=0.2)
    try:
        ranking = await maps.rank(request(folder), None, SHAPE)
        assert "def first_helper" in ranking.text and ranking.definitions == 1
        assert maps.pid is not None
        while maps.pid is not None:  # no request for idle_seconds: it ends
            await asyncio.sleep(0.05)
        again = await maps.rank(request(folder), None, SHAPE)
        assert again.text == ranking.text and maps.starts == 2
    finally:
        maps.close()


async def test_a_map_process_asked_only_to_prepare_ends_sooner(tmp_path: Path) -> None:
    folder = repository(workspace(tmp_path, "early"))
    maps = MapProcess(idle_seconds=600, prepared_seconds=0.2)
    try:
        prepared = await maps.prepare(Preparation(str(folder), 1_000_000, "o200k_base"))
        assert prepared.files == 2 and maps.pid is not None
        while maps.pid is not None:  # no map asked for prepared_seconds: it ends
            await asyncio.sleep(0.05)
        ranking = await maps.rank(request(folder), None, SHAPE)  # from the facts cache
        assert "def early_helper" in ranking.text and maps.starts == 2
    finally:
        maps.close()


class Unread:
    """A connection whose messages nobody reads."""

    def send(self, message: object) -> None:
        pass


async def test_the_map_process_keeps_the_code_of_the_last_workspaces_mapped(
    tmp_path: Path,
) -> None:
    folders = [workspace(tmp_path, f"w{n}") for n in range(KEPT_WORKSPACES + 1)]
    ranker = _Ranker(Unread(), Workers())  # type: ignore[arg-type]
    try:
        for ident, folder in enumerate(folders):
            ranking = await ranker._rank(ident, request(folder), None, SHAPE)
            assert f"def {folder.name}_helper" in ranking.text
        assert list(ranker.indexes) == [str(folder) for folder in folders[1:]]
        # Mapped again, the first is the most recent and the next oldest goes.
        await ranker._rank(99, request(folders[0]), None, SHAPE)
        assert list(ranker.indexes) == [str(folder) for folder in folders[2:] + folders[:1]]
    finally:
        ranker.workers.close()


def files_of(folder: Path, count: int, size: int) -> None:
    """``count`` modules of about ``size`` bytes, the later changed more recently."""
    for n in range(count):
        path = folder / f"m{n}.py"
        path.write_text(f"def in_m{n}():\n    return {n}\n" + "# padding\n" * (size // 10))
        os.utime(path, ns=(1_000_000_000 * (n + 1), 1_000_000_000 * (n + 1)))


@pytest.fixture
def capped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A map holds 3,500 bytes of code: three of ``files_of``'s modules."""
    monkeypatch.setenv(code_index.MAPPED_MB_ENV, str(3_500 / 2**20))


def big(tmp_path: Path) -> Path:
    """A workspace of six modules of ~1,000 bytes, ``m5.py`` changed last."""
    folder = tmp_path / "big"
    folder.mkdir()
    files_of(folder, 6, 1_000)
    return folder


@pytest.mark.usefixtures("capped")
async def test_past_the_code_a_map_holds_it_keeps_the_files_changed_last_and_says_so(
    tmp_path: Path,
) -> None:
    folder = big(tmp_path)
    ranker = _Ranker(Unread(), Workers())  # type: ignore[arg-type]
    try:
        ranking = await ranker._rank(1, request(folder), None, SHAPE)
        shown = {n for n in range(6) if f"def in_m{n}" in ranking.text}
        assert shown == {3, 4, 5} and ranking.unmapped == 3
        assert ranking.text.endswith(
            "⋮ 3 of the workspace's 6 files are not mapped: a map holds the 0.00333786 MB"
            " of code changed most recently\n"
        )
        assert ranker.indexes[str(folder)].code_bytes() <= 3_500
        (folder / "m0.py").write_text((folder / "m0.py").read_text())  # changed now
        again = await ranker._rank(2, request(folder), None, SHAPE)
        assert {n for n in range(6) if f"def in_m{n}" in again.text} == {0, 4, 5}
    finally:
        ranker.workers.close()


@pytest.mark.usefixtures("capped")
async def test_the_workspaces_mapped_together_hold_no_more_code_than_one_may(
    tmp_path: Path,
) -> None:
    folders = [tmp_path / "one", tmp_path / "two"]
    ranker = _Ranker(Unread(), Workers())  # type: ignore[arg-type]
    try:
        for ident, folder in enumerate(folders):
            folder.mkdir()
            files_of(folder, 2, 1_000)
            ranking = await ranker._rank(ident, request(folder), None, SHAPE)
            assert ranking.unmapped == 0 and "not mapped" not in ranking.text
        assert list(ranker.indexes) == [str(folders[1])]  # the first let go
    finally:
        ranker.workers.close()


@pytest.mark.usefixtures("capped")
async def test_a_name_looked_for_past_the_code_a_map_holds_says_what_was_not_looked_in(
    tmp_path: Path,
) -> None:
    from contextls.app.map_messages import FindRequest
    from contextls.app.symbol_adding import not_found

    folder = big(tmp_path)
    ranker = _Ranker(Unread(), Workers())  # type: ignore[arg-type]
    try:
        found = await ranker._find(1, FindRequest(str(folder), 1_000_000, "in_m5"))
        assert [rel for rel, _ in found.hits] == ["m5.py"]
        missed = await ranker._find(2, FindRequest(str(folder), 1_000_000, "in_m0"))
        assert not missed.hits and missed.unmapped == 3
    finally:
        ranker.workers.close()
    said = not_found("in_m0", missed).message
    assert "3 of its files were not looked in" in said
    assert said.endswith("name its file too (FILE::in_m0)")


@pytest.mark.parametrize("said", ["lots", "-1", "0", "inf", "nan", ""])
def test_a_map_size_that_is_not_a_positive_number_keeps_the_default(
    said: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(code_index.MAPPED_MB_ENV, said)
    assert code_index.mapped_megabytes() == code_index.MAPPED_MB
    assert (
        not said or f"{code_index.MAPPED_MB_ENV}={said!r} is not a positive number" in caplog.text
    )


def test_a_map_size_said_in_megabytes_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(code_index.MAPPED_MB_ENV, "256")
    assert code_index.mapped_megabytes() == 256.0


def test_a_wrong_map_size_is_said_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(code_index.MAPPED_MB_ENV, "a lot, said once")
    for _ in range(3):  # a live map reads it every few seconds
        assert code_index.mapped_megabytes() == code_index.MAPPED_MB
    assert caplog.text.count("is not a positive number") == 1


class Heard:
    """A connection that keeps what the maps' process sends."""

    def __init__(self) -> None:
        self.sent: list[tuple[Any, ...]] = []

    def send(self, message: tuple[Any, ...]) -> None:
        self.sent.append(message)


async def test_a_prepared_workspace_is_mapped_without_parsing_it_again(tmp_path: Path) -> None:
    folder = repository(workspace(tmp_path, "ready"))
    ranker = _Ranker(Unread(), Workers())  # type: ignore[arg-type]
    try:
        prepared = await ranker._prepare(Preparation(str(folder), 1_000_000, "o200k_base"))
        assert prepared == Prepared(files=2, parsed=2, unmapped=0)
        index = ranker.indexes[str(folder)]
        graph = index.uses[0]
        assert graph.complete and "o200k_base" in ranker.costs  # the graph and tokenizer too
        ranking = await ranker._rank(1, request(folder), None, SHAPE)
        assert "def ready_helper" in ranking.text and ranking.definitions == 1
        assert index.parsed == 2 and index.uses == [graph]  # nothing parsed nor made again
        again = await ranker._prepare(Preparation(str(folder), 1_000_000, "o200k_base"))
        assert again.already
    finally:
        ranker.workers.close()


async def test_a_map_asked_while_its_workspace_is_prepared_hears_the_preparation(
    tmp_path: Path,
) -> None:
    folder = repository(tmp_path / "many")
    files_of(folder, 120, 200)  # three batches
    heard = Heard()
    ranker = _Ranker(heard, Workers())  # type: ignore[arg-type]
    try:
        preparing = asyncio.ensure_future(
            ranker._prepare(Preparation(str(folder), 1_000_000, "o200k_base"))
        )
        while str(folder) not in ranker.users:  # until the preparation holds the workspace
            await asyncio.sleep(0.01)
        ranking = await ranker._rank(7, request(folder), None, SHAPE)
        assert preparing.done() and (await preparing).files == 120
        assert "def in_m0()" in ranking.text
        progress = [message[2:] for message in heard.sent if message[:2] == (PROGRESS, 7)]
        assert progress and progress[-1] == (120, 120)  # the preparation's parse, heard
        assert ranker.indexes[str(folder)].parsed == 120  # parsed once
    finally:
        ranker.workers.close()


def test_a_map_is_prepared_for_a_git_repository_unless_said_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextls.app.repo_map import PREPARE_ENV, worth_preparing

    plain = tmp_path / "plain"
    plain.mkdir()
    repository = tmp_path / "repository"
    (repository / ".git").mkdir(parents=True)
    (repository / "sub").mkdir()
    assert not worth_preparing(plain)
    assert worth_preparing(repository) and worth_preparing(repository / "sub")
    monkeypatch.setenv(PREPARE_ENV, "off")
    assert not worth_preparing(repository)
    monkeypatch.setenv(PREPARE_ENV, "on")
    assert worth_preparing(repository)


async def test_a_folder_git_does_not_list_is_not_prepared(tmp_path: Path) -> None:
    folder = workspace(tmp_path, "unlisted")
    (folder / ".git").mkdir()  # looks like a repository; git finds none
    ranker = _Ranker(Unread(), Workers())  # type: ignore[arg-type]
    try:
        prepared = await ranker._prepare(Preparation(str(folder), 1_000_000, "o200k_base"))
        assert prepared.skipped == "git does not list its files" and not ranker.indexes
    finally:
        ranker.workers.close()


@pytest.mark.usefixtures("capped")
async def test_a_preparation_never_takes_the_place_of_a_workspace_mapped(tmp_path: Path) -> None:
    mapped, other = tmp_path / "mapped", repository(tmp_path / "other")
    mapped.mkdir()
    files_of(mapped, 2, 1_000)
    files_of(other, 2, 1_000)
    ranker = _Ranker(Unread(), Workers())  # type: ignore[arg-type]
    try:
        await ranker._rank(1, request(mapped), None, SHAPE)
        prepared = await ranker._prepare(Preparation(str(other), 1_000_000, "o200k_base"))
        assert prepared.files == 2  # parsed, but together over the code a map holds:
        assert list(ranker.indexes) == [str(mapped)]  # the prepared one went
        full = [repository(tmp_path / f"w{n}") for n in range(KEPT_WORKSPACES)]
        for ident, folder in enumerate(full):
            files_of(folder, 1, 100)
            await ranker._rank(ident, request(folder), None, SHAPE)
        skipped = await ranker._prepare(Preparation(str(other), 1_000_000, "o200k_base"))
        assert skipped.skipped and list(ranker.indexes) == [str(folder) for folder in full]
    finally:
        ranker.workers.close()


async def test_a_cancelled_preparation_holds_its_workspace_until_its_graph_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextls.app import map_ranker

    folder = repository(workspace(tmp_path, "held"))
    making, release = threading.Event(), threading.Event()
    real = map_ranker.uses

    def slow(*args: Any) -> Any:
        making.set()
        release.wait(60)
        return real(*args)

    monkeypatch.setattr(map_ranker, "uses", slow)
    ranker = _Ranker(Unread(), Workers())  # type: ignore[arg-type]
    try:
        task = asyncio.ensure_future(
            ranker._prepare(Preparation(str(folder), 1_000_000, "o200k_base"))
        )
        while not making.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        for _ in range(20):
            await asyncio.sleep(0)
        assert ranker.locks[str(folder)].locked()  # the graph is being made: held
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not ranker.locks[str(folder)].locked()
    finally:
        release.set()
        ranker.workers.close()


async def test_a_preparation_whose_process_died_is_answered_when_the_next_request_replaces_it(
    tmp_path: Path,
) -> None:
    from contextls.core.errors import ContextError

    folder = repository(tmp_path / "big")
    files_of(folder, 60, 200)
    other = workspace(tmp_path, "other")
    maps = MapProcess()
    try:
        preparing = asyncio.ensure_future(
            maps.prepare(Preparation(str(folder), 1_000_000, "o200k_base"))
        )
        while maps.pid is None:
            await asyncio.sleep(0.01)
        os.kill(maps.pid, signal.SIGKILL)
        # The loop does not run meanwhile: the next request finds the process dead before
        # the daemon reads its end.
        while maps._process is not None and maps._process.is_alive():
            time.sleep(0.01)
        ranking = await maps.rank(request(other), None, SHAPE)
        assert "def other_helper" in ranking.text and maps.starts == 2
        with pytest.raises(ContextError, match="it ended"):
            await preparing
    finally:
        maps.close()


async def test_a_file_left_out_as_too_large_is_mapped_once_larger_files_are_read(
    tmp_path: Path,
) -> None:
    from dataclasses import replace

    folder = workspace(tmp_path, "sized")
    (folder / "large.py").write_text("def large_one():\n    return 1\n" + "# padding\n" * 50)
    ranker = _Ranker(Unread(), Workers())  # type: ignore[arg-type]
    try:
        small = await ranker._rank(1, replace(request(folder), max_bytes=200), None, SHAPE)
        assert "def sized_helper" in small.text and "large_one" not in small.text
        larger = await ranker._rank(2, request(folder), None, SHAPE)
        assert "def large_one" in larger.text
    finally:
        ranker.workers.close()


async def test_a_map_and_a_preparation_say_which_files_they_could_not_read(
    tmp_path: Path,
) -> None:
    """Nothing left out silently: a file that is not UTF-8 is named in the map's last
    line, and counted by a preparation."""
    folder = repository(workspace(tmp_path, "latin"))
    (folder / "legacy.py").write_bytes(b"# caf\xe9\ndef legacy():\n    return 1\n")
    (folder / "older.py").write_bytes(b"# na\xefve\ndef older():\n    return 2\n")
    maps = MapProcess()
    try:
        prepared = await maps.prepare(Preparation(str(folder), 1_000_000, "o200k_base"))
        assert (prepared.files, prepared.unread) == (2, 2)
        ranking = await maps.rank(request(folder), None, SHAPE)
        assert "def latin_helper" in ranking.text
        last = ranking.text.rstrip("\n").splitlines()[-1]
        assert last.startswith("⋮ 2 files could not be read for the map (")
        assert "binary or not UTF-8: legacy.py and 1 more" in last
    finally:
        maps.close()
