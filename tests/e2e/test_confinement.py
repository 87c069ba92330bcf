"""Nothing outside the workspace is ever read: not through a symlink put in a file's place,
not through an imported path whose folder leads out, not in a race between check and read."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from pathlib import Path

import pytest

from contextls.app import transfer
from contextls.core.errors import ContextError
from contextls.protocol import EXPORT_FORMAT, EXPORT_VERSION, ErrorCode, ExportDocument, ExportItem

from ..unit.test_service import Editor, start

SECRET = "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "ws", tmp_path / "home" / ".aws"
    root.mkdir()
    outside.mkdir(parents=True)
    (outside / "credentials").write_text(f"[default]\n{SECRET}\n")
    return root, outside


def test_a_file_that_becomes_a_symlink_out_goes_stale_and_keeps_its_text(
    places: tuple[Path, Path],
) -> None:
    root, outside = places
    settings = root / "settings.txt"
    settings.write_text("timeout = 30\n")
    editor = Editor()
    session = start(root, ":memory:", editor)
    workspace = session.route()
    workspace.adding.add_file(settings.as_uri())
    workspace.unit_of_work.commit()
    settings.unlink()
    settings.symlink_to(outside / "credentials")  # what a `git checkout` of a link does
    workspace.follower.follow_files()
    workspace.unit_of_work.commit()
    (item,) = list(workspace.window)
    assert item.content == "timeout = 30\n" and item.stale
    assert item.metadata["staleReason"] == "outside"
    rendered = workspace.reader.render("markdown", None, None, None, None)
    assert SECRET not in rendered.text
    assert "[stale: the file now leads outside the workspace" in rendered.text
    assert any("settings.txt now leads outside the workspace" in w for w in editor.warnings)
    with pytest.raises(ContextError) as refused:
        workspace.follower.refresh([item.id])
    assert refused.value.code == ErrorCode.OUTSIDE_WORKSPACE


def test_a_deleted_file_renders_as_deleted(places: tuple[Path, Path]) -> None:
    root, _ = places
    (root / "gone.py").write_text("x = 1\n")
    session = start(root, ":memory:", Editor())
    workspace = session.route()
    workspace.adding.add_file((root / "gone.py").as_uri())
    (root / "gone.py").unlink()
    workspace.follower.follow_files()
    rendered = workspace.reader.render("markdown", None, None, None, None)
    assert "[stale: the file was deleted; this is the text it had]" in rendered.text


def test_an_import_whose_folder_leads_out_is_refused(places: tuple[Path, Path]) -> None:
    root, outside = places
    (root / "linkdir").symlink_to(outside)
    session = start(root, ":memory:", Editor())
    document = ExportDocument(
        format=EXPORT_FORMAT,
        version=EXPORT_VERSION,
        window=[
            ExportItem(
                id="ctx-1",
                kind="file",
                content="harmless\n",
                metadata={"path": "linkdir/credentials"},
            )
        ],
    )
    with pytest.raises(ContextError) as refused:
        transfer.import_all(session.route(), document, dry_run=False)
    assert refused.value.code == ErrorCode.OUTSIDE_WORKSPACE
    assert list(session.route().window) == []


RENAME_EXCHANGE = 2


def _exchanger() -> ctypes.CDLL | None:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return libc if hasattr(libc, "renameat2") else None


@pytest.mark.skipif(_exchanger() is None, reason="needs renameat2 (Linux, glibc >= 2.28)")
def test_swapping_a_folder_for_a_symlink_during_adds_never_leaks(
    places: tuple[Path, Path],
) -> None:
    """The probe's race: a folder and a symlink out are exchanged atomically, over and
    over, while the same file is added 3,000 times."""
    root, outside = places
    (outside / "file.txt").write_text(f"{SECRET}\n")
    (root / "dir").mkdir()
    (root / "dir" / "file.txt").write_text("inside\n")
    (root / "link").symlink_to(outside)
    libc = _exchanger()
    assert libc is not None
    at = ctypes.c_int(-100)  # AT_FDCWD
    a, b = os.fsencode(root / "dir"), os.fsencode(root / "link")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            libc.renameat2(at, a, at, b, RENAME_EXCHANGE)

    swapper = threading.Thread(target=swap, daemon=True)
    session = start(root, ":memory:", Editor(), maxTokens=100_000)
    workspace = session.route()
    uri = (root / "dir" / "file.txt").as_uri()
    leaked = refused = 0
    swapper.start()
    try:
        for _ in range(3000):
            try:
                result = workspace.adding.add_file(uri)
            except ContextError:
                refused += 1
                continue
            leaked += SECRET in result.item.content
            workspace.changes.remove([result.item.id])
    finally:
        stop.set()
        swapper.join()
    assert leaked == 0
    assert refused < 3000  # the race was run, not refused outright


def test_a_secret_that_arrives_live_is_said_once_and_stays_in_the_status(
    places: tuple[Path, Path],
) -> None:
    root, _ = places
    settings = root / "settings.txt"
    settings.write_text("timeout = 30\n")
    editor = Editor()
    workspace = start(root, ":memory:", editor).route()
    added = workspace.adding.add_file(settings.as_uri())
    assert added.warnings == [] and workspace.status().warnings == []
    settings.write_text(f"timeout = 30\n{SECRET}\n")
    workspace.follower.follow_files()
    said = [w for w in editor.warnings if "settings.txt seems to contain" in w]
    assert len(said) == 1 and "AWS secret access key" in said[0]
    assert SECRET.split("= ")[1] not in said[0]
    assert workspace.status().warnings == said
    rendered = workspace.reader.render("markdown", None, None, None, None)
    assert said[0] in rendered.warnings
    settings.write_text(f"timeout = 31\n{SECRET}\n")  # the same secret: not said again
    workspace.follower.follow_files()
    assert len([w for w in editor.warnings if "settings.txt seems to contain" in w]) == 1
    settings.write_text("timeout = 31\n")
    workspace.follower.follow_files()
    assert workspace.status().warnings == []
