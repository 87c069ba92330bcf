"""Expanding a bulk add's folders and globs: what is added, what is left out and said so."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from contextls.app.expand import SKIPPED_DIRECTORIES, expand, glob_regex
from contextls.core.errors import InvalidParams
from contextls.protocol import ErrorCode, FileTarget, Position, Range

LINE_1 = Range(start=Position(line=0, character=0), end=Position(line=1, character=0))


def make_tree(root: Path) -> None:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\n")
    (root / "src" / "pkg" / "b.py").write_text("b = 2\n")
    (root / "src" / ".hidden.py").write_text("h = 1\n")
    (root / "src" / ".env").write_text("TOKEN=1\n")
    (root / "src" / "deploy.pem").write_text("-----\n")
    for skipped in ("node_modules", "__pycache__", ".venv"):
        (root / "src" / skipped).mkdir()
        (root / "src" / skipped / "junk.py").write_text("junk\n")


def relative(root: Path, paths: list[Path]) -> list[str]:
    return [path.relative_to(root).as_posix() for path in paths]


def folder(root: Path, name: str) -> FileTarget:
    return FileTarget(uri=(root / name).as_uri())


def test_a_folder_leaves_out_tool_folders_hidden_files_and_credentials(tmp_path: Path) -> None:
    make_tree(tmp_path)
    found = expand([folder(tmp_path, "src")], tmp_path)
    assert relative(tmp_path, [f.path for f in found.files]) == ["src/a.py", "src/pkg/b.py"]
    assert not any(f.named for f in found.files)
    assert sorted(found.skipped) == [
        ("src/.env", "may hold secrets; name it to add it"),
        ("src/.hidden.py", "hidden"),
        ("src/.venv/", "a tool folder"),
        ("src/__pycache__/", "a tool folder"),
        ("src/deploy.pem", "may hold secrets; name it to add it"),
        ("src/node_modules/", "a tool folder"),
    ]
    assert found.refused == []


def test_globs_match_like_a_shell_and_a_file_added_whole_replaces_its_regions(
    tmp_path: Path,
) -> None:
    make_tree(tmp_path)
    found = expand(
        [
            FileTarget(uri=(tmp_path / "src" / "a.py").as_uri(), range=LINE_1),
            FileTarget(glob="src/**/*.py"),
            FileTarget(uri=(tmp_path / "src" / "a.py").as_uri()),
        ],
        tmp_path,
    )
    assert [(f.path.name, f.range) for f in found.files] == [("a.py", None), ("b.py", None)]


def test_an_absolute_glob_is_taken_relative_to_the_workspace(tmp_path: Path) -> None:
    make_tree(tmp_path)
    found = expand([FileTarget(glob=f"{tmp_path}/src/*.py")], tmp_path)
    assert relative(tmp_path, [f.path for f in found.files]) == ["src/a.py"]


def test_a_named_tool_folder_or_hidden_part_is_expanded(tmp_path: Path) -> None:
    make_tree(tmp_path)
    named = expand([folder(tmp_path, "src/node_modules")], tmp_path)
    assert [f.path.name for f in named.files] == ["junk.py"]
    hidden = expand([FileTarget(glob="src/.h*.py")], tmp_path)
    assert [f.path.name for f in hidden.files] == [".hidden.py"]


def test_files_named_are_tried_whatever_they_are(tmp_path: Path) -> None:
    make_tree(tmp_path)
    found = expand(
        [FileTarget(uri=(tmp_path / "src" / ".env").as_uri()), folder(tmp_path, "missing.py")],
        tmp_path,
    )
    assert [(f.path.name, f.named) for f in found.files] == [(".env", True), ("missing.py", True)]


def test_empty_folders_globs_and_outside_targets_are_refused_in_words(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    outside = tmp_path.parent
    found = expand(
        [
            folder(tmp_path, "empty"),
            FileTarget(glob="*.nothing"),
            FileTarget(uri=outside.as_uri()),
            FileTarget(glob=f"{outside}/*.py"),
        ],
        tmp_path,
    )
    assert found.files == []
    assert [(r.code, r.message) for r in found.refused] == [
        (ErrorCode.FILE_NOT_FOUND, "empty holds no file to add"),
        (ErrorCode.FILE_NOT_FOUND, "no file matches *.nothing"),
        (ErrorCode.OUTSIDE_WORKSPACE, f"{outside} is outside the workspace folder {tmp_path}"),
        (
            ErrorCode.OUTSIDE_WORKSPACE,
            f"{outside}/*.py is outside the workspace folder {tmp_path}",
        ),
    ]


def test_a_range_on_a_folder_or_a_glob_is_invalid_params(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(InvalidParams, match=r"targets\[0\]\.range"):
        expand([FileTarget(uri=(tmp_path / "d").as_uri(), range=LINE_1)], tmp_path)
    with pytest.raises(InvalidParams, match=r"targets\[1\]"):
        expand([FileTarget(glob="*.py"), FileTarget()], tmp_path)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_inside_git_folders_and_globs_follow_gitignore(tmp_path: Path) -> None:
    make_tree(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("src/pkg/\n")
    (tmp_path / "src" / "pkg" / "tracked.py").write_text("t\n")
    subprocess.run(["git", "-C", str(tmp_path), "add", "-f", "src/pkg/tracked.py"], check=True)
    by_folder = expand([folder(tmp_path, "src")], tmp_path)
    by_glob = expand([FileTarget(glob="src/**/*.py")], tmp_path)
    expected = ["src/a.py", "src/pkg/tracked.py"]
    assert relative(tmp_path, [f.path for f in by_folder.files]) == expected
    assert relative(tmp_path, [f.path for f in by_glob.files]) == expected


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("src/*.py", "src/x/a.py", False),
        ("**/*.ts", "a/b/c.ts", True),
        ("a?.txt", "ab.txt", True),
        ("a?.txt", "a/.txt", False),
        ("[!a]*.md", "b.md", True),
        ("[!a]*.md", "a.md", False),
        ("[a-c].md", "b.md", True),
    ],
)
def test_glob_regex(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).fullmatch(path)) is matches


def test_skipped_directories_include_the_usual_suspects() -> None:
    assert {".git", "node_modules", ".venv", "__pycache__"} <= SKIPPED_DIRECTORIES
