"""The files a bulk add means: folders and globs expanded, what to leave out left out.

One expansion for every client (the CLI, the editors, MCP), so the rules are the same
wherever a person asks:

* A file named by ``uri`` is always tried; whatever refuses it (binary, too large,
  outside the workspace) is a refusal the person hears of.
* A folder or a glob expands to files. Inside a git work tree they are what
  ``git ls-files -co --exclude-standard`` lists (tracked, plus untracked and not
  ignored), globs included (``:(glob)`` pathspecs, so git never walks an ignored
  ``node_modules``); elsewhere a walk that never enters :data:`SKIPPED_DIRECTORIES`.
* Expansion leaves out tool folders (``.git``, ``node_modules``, ``.venv``…) unless
  the folder named is one, hidden files and folders unless the folder or pattern
  names a hidden part itself (as a shell's ``*`` does), and files that usually hold
  credentials (``.env``, ``.netrc``, keys…), said so. Binary and oversize files are
  found when they are read and left out then, said so too.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Final

from contextls.app.files import is_text_name, resolve, shown_name, uri_to_path
from contextls.core.errors import ContextError, InvalidParams
from contextls.core.secrets import is_secret_path
from contextls.protocol import ErrorCode, FileTarget, Range, TargetRefusal

SKIPPED_DIRECTORIES: Final = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".eggs",
    }
)
GIT_TIMEOUT_SECONDS: Final = 30
SECRET_REASON: Final = "may hold secrets; name it to add it"
TOOL_REASON: Final = "a tool folder"
UNWALKED: Final = "\u2026"
"""The name that stands for a tool folder's files, which are not walked."""
HIDDEN_REASON: Final = "hidden"
NOT_TEXT_NAME_REASON: Final = "its name is not UTF-8 text, which contextls cannot keep; rename it"


@dataclass(frozen=True, slots=True)
class PlannedFile:
    """One file (or a region of one) to add, and the target it came from."""

    path: Path
    range: Range | None
    origin: str
    """The target as it was sent (the URI or the glob)."""
    named: bool
    """Named by the target itself: what refuses it is a refusal, not a skip."""


@dataclass(slots=True)
class Expansion:
    files: list[PlannedFile] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(path relative to the root, why)."""
    refused: list[TargetRefusal] = field(default_factory=list)


def expand(targets: Sequence[FileTarget], root: Path) -> Expansion:
    """Every target's files, in order, each (path, range) once; a file added whole takes
    the place of the regions of it the same request names."""
    expansion = Expansion()
    seen: set[tuple[Path, tuple[int, int, int, int] | None]] = set()
    for index, target in enumerate(targets):
        for planned in _expand_target(index, target, root, expansion):
            key = (planned.path, _range_key(planned.range))
            if key not in seen:
                seen.add(key)
                expansion.files.append(planned)
    whole = {planned.path for planned in expansion.files if planned.range is None}
    expansion.files = [
        planned for planned in expansion.files if planned.range is None or planned.path not in whole
    ]
    return expansion


def _range_key(span: Range | None) -> tuple[int, int, int, int] | None:
    if span is None:
        return None
    return (span.start.line, span.start.character, span.end.line, span.end.character)


def _expand_target(
    index: int, target: FileTarget, root: Path, expansion: Expansion
) -> list[PlannedFile]:
    where = f"$.targets[{index}]"
    if (target.uri is None) == (target.glob is None):
        raise InvalidParams(where, "give a target either a uri or a glob")
    if target.glob is not None:
        if target.range is not None:
            raise InvalidParams(f"{where}.range", "a range needs one file, not a pattern")
        return _expand_glob(target.glob, root, expansion)
    assert target.uri is not None
    path = uri_to_path(target.uri, f"{where}.uri")
    if not path.is_dir():
        return [PlannedFile(path, target.range, target.uri, named=True)]
    if target.range is not None:
        raise InvalidParams(f"{where}.range", f"{path} is a folder; a range needs a file")
    try:
        folder = resolve(path)
    except ContextError as error:
        expansion.refused.append(
            TargetRefusal(target=target.uri, code=error.code, message=error.message)
        )
        return []
    if not folder.is_relative_to(root):
        expansion.refused.append(_outside(target.uri, folder, root))
        return []
    found = _folder_files(folder, root)
    named_hidden = any(part.startswith(".") for part in folder.relative_to(root).parts)
    planned = _keep(found, folder, root, target.uri, named_hidden, expansion)
    if not found:
        expansion.refused.append(
            TargetRefusal(
                target=target.uri,
                code=ErrorCode.FILE_NOT_FOUND,
                message=f"{_shown(folder, root)} holds no file to add",
            )
        )
    return planned


def _expand_glob(pattern: str, root: Path, expansion: Expansion) -> list[PlannedFile]:
    relative = _relative_pattern(pattern, root)
    if relative is None:
        expansion.refused.append(
            TargetRefusal(
                target=pattern,
                code=ErrorCode.OUTSIDE_WORKSPACE,
                message=f"{pattern} is outside the workspace folder {root}",
            )
        )
        return []
    base = root / _literal_prefix(relative)
    matcher = glob_regex(relative)
    listed = _git_files(root, [f":(glob){relative}"])
    if listed is None:
        found = [path for path in _walk(base) if matcher.fullmatch(_posix(path, root))]
    else:
        found = [path for path in listed if matcher.fullmatch(_posix(path, root))]
    named_hidden = any(part.startswith(".") for part in PurePosixPath(relative).parts)
    planned = _keep(sorted(found), base, root, pattern, named_hidden, expansion)
    if not found:
        expansion.refused.append(
            TargetRefusal(
                target=pattern, code=ErrorCode.FILE_NOT_FOUND, message=f"no file matches {pattern}"
            )
        )
    return planned


def parts_under(path: Path, base: Path) -> tuple[str, ...]:
    """``path.relative_to(base).parts`` when ``path`` is under ``base``, else ``()``: the
    same for the absolute, normalised paths expansion makes, in string operations
    (pathlib's were half of listing a workspace of 1,800 files, which a map does each
    time it ranks)."""
    text, prefix = str(path), str(base).rstrip("/") + "/"
    return tuple(text[len(prefix) :].split("/")) if text.startswith(prefix) else ()


def _keep(
    found: list[Path],
    base: Path,
    root: Path,
    origin: str,
    named_hidden: bool,
    expansion: Expansion,
) -> list[PlannedFile]:
    """What expansion adds of ``found``: hidden and tool folders out (each said once, with
    how many files it held), credentials said so."""
    planned: list[PlannedFile] = []
    left_out: dict[Path, tuple[str, int]] = {}
    for path in found:
        if not is_text_name(str(path)):
            expansion.skipped.append((shown_name(_shown(path, root)), NOT_TEXT_NAME_REASON))
            continue
        relative = parts_under(path, base)
        tool = next(
            (n for n, part in enumerate(relative[:-1]) if part in SKIPPED_DIRECTORIES), None
        )
        hidden = next((n for n, part in enumerate(relative) if part.startswith(".")), None)
        if tool is None and not named_hidden and hidden is not None and is_secret_path(path):
            expansion.skipped.append((_shown(path, root), SECRET_REASON))  # the weightier why
            continue
        if tool is not None or (not named_hidden and hidden is not None):
            depth, why = (tool, TOOL_REASON) if tool is not None else (hidden, HIDDEN_REASON)
            assert depth is not None
            where = base.joinpath(*relative[: depth + 1])
            counted = 0 if path.name == UNWALKED else 1
            left_out[where] = (why, left_out.get(where, (why, 0))[1] + counted)
            continue
        if is_secret_path(path) or ".git" in parts_under(path, root):
            expansion.skipped.append((_shown(path, root), SECRET_REASON))
            continue
        planned.append(PlannedFile(path, None, origin, named=False))
    for where, (why, files) in left_out.items():
        shown = _shown(where, root) + ("/" if files > 1 or where.is_dir() else "")
        held = f" ({files:,} files)" if files > 1 else ""
        expansion.skipped.append((shown, f"{why}{held}"))
    return planned


def _relative_pattern(pattern: str, root: Path) -> str | None:
    """The pattern relative to the root, or None when its fixed part lies outside."""
    posix = pattern.replace(os.sep, "/")
    if not posix.startswith("/"):
        posix = f"{root.as_posix()}/{posix}"
    prefix = _literal_prefix(posix)
    try:
        where = resolve(Path(prefix))
    except ContextError:
        return None
    if not where.is_relative_to(root):
        return None
    rest = PurePosixPath(posix).relative_to(prefix) if posix != prefix else PurePosixPath()
    anchored = where.relative_to(root).as_posix()
    joined = (PurePosixPath(anchored) / rest).as_posix()
    return joined.removeprefix("./") or "."


def _literal_prefix(pattern: str) -> str:
    """The folders before the first wildcard: ``src/**/*.py`` -> ``src``."""
    parts: list[str] = []
    for part in PurePosixPath(pattern).parts:
        if any(character in part for character in "*?["):
            break
        parts.append(part)
    return PurePosixPath(*parts).as_posix() if parts else "."


@lru_cache(maxsize=64)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as a regular expression over ``/``-separated paths: ``**`` crosses folders,
    ``*`` and ``?`` do not, ``[...]`` is a class (``[!...]`` negated)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (close := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : close]
            negate = body.startswith("!")
            body = re.escape(body[1:] if negate else body).replace("\\-", "-")
            out.append(f"[{'^' if negate else ''}{body}]")
            i = close + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out))


def _folder_files(folder: Path, root: Path) -> list[Path]:
    listed = _git_files(folder, ["."])
    found = listed if listed is not None else _walk(folder)
    return sorted(path for path in found if path.name == UNWALKED or path.is_file())


def _walk(base: Path) -> list[Path]:
    """The files under ``base``; a tool folder is not walked, but stands in the list for
    itself (``.venv/`` is said to be left out, not its thousands of files)."""
    files: list[Path] = []
    for where, folders, names in os.walk(base):
        skipped = [name for name in folders if name in SKIPPED_DIRECTORIES]
        folders[:] = [name for name in folders if name not in SKIPPED_DIRECTORIES]
        files.extend(Path(where) / name for name in names)
        files.extend(Path(where) / name / UNWALKED for name in skipped)
    return files


def in_git_work_tree(directory: Path) -> bool:
    """Whether ``directory`` is in a git work tree: a ``.git`` in it or a folder above, as
    git looks for it (on disk: no git process)."""
    try:
        resolved = directory.resolve()
        return any((folder / ".git").exists() for folder in (resolved, *resolved.parents))
    except OSError:
        return False


def git_lists(directory: Path) -> bool:
    """Whether git lists the files of ``directory`` (a work tree git reads: installed, the
    repository found and trusted), rather than expansion walking everything in it."""
    completed = _git(directory, "rev-parse", "--is-inside-work-tree")
    return completed is not None and completed.stdout.strip() == b"true"


_LISTING: Final = ("ls-files", "-z", "-co", "--exclude-standard")
"""What expansion asks git: tracked files, and untracked ones not ignored (one list, so
that ``git_listing`` stays the whole of what a folder's expansion is made from)."""


def git_listing(directory: Path) -> bytes | None:
    """What git lists of ``directory`` as expansion asks it (tracked, and untracked but
    not ignored), as git says it; None outside a git work tree. The same listing means
    the same files: what expansion makes of them need not be made again."""
    completed = _git(directory, *_LISTING)
    return None if completed is None else completed.stdout


def _git_files(directory: Path, pathspecs: list[str]) -> list[Path] | None:
    """Tracked and untracked-but-not-ignored files matching ``pathspecs`` (relative to
    ``directory``), or None outside a git work tree (or without git)."""
    completed = _git(directory, *_LISTING, "--", *pathspecs)
    if completed is None:
        return None
    names = completed.stdout.decode("utf-8", "surrogateescape").split("\0")
    return [directory / name for name in names if name]


def _git(directory: Path, *arguments: str) -> subprocess.CompletedProcess[bytes] | None:
    """git's answer in ``directory``, or None when it failed (or there is no git)."""
    executable = shutil.which("git")
    if executable is None or not directory.is_dir():
        return None
    try:
        completed = subprocess.run(
            [executable, "-C", str(directory), *arguments],
            capture_output=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return completed if completed.returncode == 0 else None


def _posix(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _outside(target: str, path: Path, root: Path) -> TargetRefusal:
    return TargetRefusal(
        target=target,
        code=ErrorCode.OUTSIDE_WORKSPACE,
        message=f"{path} is outside the workspace folder {root}",
    )
