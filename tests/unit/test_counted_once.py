"""A folder's add and an import count their texts once, in a worker thread, and their
changes on the event loop then count only headings: a folder of 7 MB (more text than the
tokenizer remembers) was counted again there, every client waiting ~1 s; an import of
2,500 items counted each step's, up to ~0.4 s a step."""

from __future__ import annotations

import asyncio
import inspect
import shutil
import sysconfig
import threading
from pathlib import Path

import pytest

from contextls.app import bulk, workspace_state
from contextls.app.configuring import precount
from contextls.app.transfer import Importing, export
from contextls.app.workspace import Workspace
from contextls.core.tokens import PIECES_KEPT
from contextls.protocol import AddFilesParams, FileTarget

from .test_service import Editor, start


def _a_copy_of_the_standard_library(lib: Path) -> Path:
    """Its modules and three of its packages (~7 MB: more than the tokenizer remembers)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    lib.mkdir(parents=True)
    for module in sorted(stdlib.glob("*.py")):
        shutil.copyfile(module, lib / module.name)
    for package in ("asyncio", "email", "unittest"):
        shutil.copytree(stdlib / package, lib / package, ignore=shutil.ignore_patterns("*.pyc"))
    return lib


def _a_large_window(tmp_path: Path) -> Workspace:
    """A window holding that copy, file by file."""
    lib = _a_copy_of_the_standard_library(tmp_path / "ws" / "lib")
    session = start(tmp_path / "ws", ":memory:", Editor(), maxTokens=3_000_000, maxItems=1000)
    workspace = session.route()
    bulk.add_files(workspace, AddFilesParams(targets=[FileTarget(uri=str(lib))], force=True))
    assert sum(len(item.content) for item in workspace.window) > PIECES_KEPT
    return workspace


def test_a_folder_larger_than_the_tokenizer_remembers_is_counted_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib = _a_copy_of_the_standard_library(tmp_path / "ws" / "lib")
    size = sum(path.stat().st_size for path in lib.rglob("*.py"))
    assert size > PIECES_KEPT  # more than the tokenizer remembers
    session = start(tmp_path / "ws", ":memory:", Editor(), maxTokens=3_000_000, maxItems=1000)
    workspace = session.route()
    params = AddFilesParams(targets=[FileTarget(uri=str(lib))], force=True)
    plan = bulk.read_plan(workspace, params)  # the worker thread's part

    counted: list[str] = []
    scanned: list[str] = []
    tokenizer = workspace.tokenizer
    count = tokenizer._count
    monkeypatch.setattr(tokenizer, "_count", lambda text: counted.append(text) or count(text))
    scan = workspace_state.secrets_in
    monkeypatch.setattr(
        workspace_state, "secrets_in", lambda text: scanned.append(text) or scan(text)
    )
    result = bulk.add_files(workspace, params, plan)  # the event loop's part
    assert len(result.items) == len(plan.candidates) > 250
    assert sum(map(len, counted)) < size / 50  # headings, not the files' text
    assert not scanned


def test_an_import_counts_its_items_before_its_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    source = start(tmp_path / "a", ":memory:", Editor(), maxItems=5, maxTokens=100_000)
    exported = source.route()
    for n in range(1_200):
        exported.adding.add_text("text", f"note {n}: " + f"the word {n} and its neighbours " * 20)
    document = export(exported, archive=True)
    assert len(document.window) == 5 and len(document.archive) == 1_195
    session = start(tmp_path / "b", ":memory:", Editor(), maxItems=5, maxTokens=100_000)
    workspace = session.route()
    importing = Importing(workspace, document)
    counted_ahead = importing.counted()  # the worker thread's part

    counted: list[str] = []
    tokenizer = workspace.tokenizer
    count = tokenizer._count
    monkeypatch.setattr(tokenizer, "_count", lambda text: counted.append(text) or count(text))
    with tokenizer.consulting(counted_ahead):
        while importing.step():  # the event loop's part, a change at a time
            pass
    result = importing.result()
    assert len(result.archived) == 1_195 and len(result.added) == 5
    assert sum(map(len, counted)) < 2_000  # headings, not the items' text


def test_a_change_of_model_counts_a_large_window_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = _a_large_window(tmp_path)
    wanted = {"model": "gpt-3.5-turbo"}
    tokenizer = workspace.config.tokenizer_after(wanted, [])
    assert tokenizer is not None and tokenizer.encoding == "cl100k_base"
    counted_ahead = precount(tokenizer, list(workspace.window))  # the worker thread's part

    counted: list[str] = []
    count = tokenizer._count
    monkeypatch.setattr(tokenizer, "_count", lambda text: counted.append(text) or count(text))
    with tokenizer.consulting(counted_ahead):
        rehearsed = workspace.config.configure(wanted, dry_run=True)
        changed = workspace.config.configure(wanted)
    assert rehearsed.changed == changed.changed == ["model", "encoding"]
    assert sum(map(len, counted)) < PIECES_KEPT / 50  # headings, not the files' text


def test_a_large_window_shown_as_outlines_and_whole_is_counted_in_its_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """setView outlines and counts in a worker thread; the change on the event loop looks
    the counts up: the whole of 7 MB (more than the tokenizer remembers) was counted again
    there, one wait of ~0.5 s for every client."""
    workspace = _a_large_window(tmp_path)
    ids = [item.id for item in workspace.window]

    on_the_loop: list[str] = []
    tokenizer = workspace.tokenizer
    count = tokenizer._count

    def counting(text: str) -> int:
        if threading.current_thread() is threading.main_thread():
            on_the_loop.append(text)
        return count(text)

    monkeypatch.setattr(tokenizer, "_count", counting)
    for view in ("outline", "whole"):
        shown = workspace.views.set_view(ids, view)
        assert inspect.isawaitable(shown)  # its texts are outlined and counted in a thread
        result = asyncio.run(shown)  # type: ignore[arg-type]
        assert len(result.items) > 250
        assert sum(map(len, on_the_loop)) < PIECES_KEPT / 50  # headings, not the files' text
