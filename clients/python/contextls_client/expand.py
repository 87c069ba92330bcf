"""Turn ``add`` targets into the list of files to send, expanding directories and globs.

Rules, kept deliberately simple:

* A file named explicitly is always sent; the server decides whether to refuse
  it (binary, too big, outside the workspace) and the CLI reports that.
* A directory or a glob expands to files. Inside a git work tree the
  candidates are what ``git ls-files -co --exclude-standard`` lists (tracked
  plus untracked-but-not-ignored files), so ``.gitignore`` is respected;
  elsewhere every file is a candidate.
* Expansion never descends into :data:`SKIPPED_DIRECTORIES` (``.git``,
  ``node_modules``, ``.venv``, ``__pycache__``…) unless you name one yourself,
  e.g. ``contextls add node_modules/pkg``.
* Files that look binary (a NUL byte in the first 8 KiB) are skipped quietly
  during expansion and counted.
* Hidden files and directories (a name starting with ``.``) are left out of
  both directories and globs, as a shell's ``*`` leaves them out, unless the
  directory or pattern you give names a hidden part itself (``add .github``).
* Files that usually hold credentials (``contextls.core.secrets``: ``.env``,
  ``*.pem``, ``id_rsa``…) are skipped, and said so, unless named explicitly.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from contextls.core.secrets import is_secret_path
from contextls_client.targets import AddTarget, LineSpan, TargetError

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
BINARY_SNIFF_BYTES: Final = 8192
GIT_TIMEOUT_SECONDS: Final = 30


@dataclass(frozen=True)
class PlannedAdd:
    """One file (or region of one) to send, and the argument it came from."""

    path: Path
    lines: LineSpan | None
    origin: str
    expanded: bool
    """True when a directory or glob produced it (refusals become skips)."""


@dataclass
class AddPlan:
    adds: list[PlannedAdd] = field(default_factory=list)
    skipped_binary: list[Path] = field(default_factory=list)
    skipped_secret: list[Path] = field(default_factory=list)
    """Files that look like credentials, met while expanding (never sent)."""
    empty_targets: list[str] = field(default_factory=list)
    """Directories or globs that expanded to no file at all."""
    outside: list[str] = field(default_factory=list)
    """Directories or globs outside the workspace, left unexpanded."""


def plan_adds(targets: Sequence[AddTarget], cwd: Path, root: Path | None = None) -> AddPlan:
    """Expand every target, in order, without sending the same file twice.

    A directory or glob outside ``root`` is not walked at all (``add /`` would
    take ages just to be refused file by file); it is listed in ``outside``.
    """
    plan = AddPlan()
    seen: set[tuple[Path, LineSpan | None]] = set()
    for target in targets:
        for planned in _expand_target(target, cwd, root, plan):
            key = (planned.path, planned.lines)
            if key not in seen:
                seen.add(key)
                plan.adds.append(planned)
    return plan


def looks_binary(path: Path) -> bool:
    """Whether the file starts with a NUL byte within its first 8 KiB (git's test)."""
    try:
        with path.open("rb") as stream:
            return b"\0" in stream.read(BINARY_SNIFF_BYTES)
    except OSError:
        return False


def _expand_target(
    target: AddTarget, cwd: Path, root: Path | None, plan: AddPlan
) -> list[PlannedAdd]:
    literal = cwd / target.path
    glob_pattern = target.is_glob and not literal.exists()
    if not glob_pattern and not literal.is_dir():
        return [PlannedAdd(literal, target.lines, target.path, expanded=False)]
    if target.lines is not None:
        raise TargetError(f"{target.path}:{target.lines}: a line range needs a file")
    base = cwd / _literal_prefix(target.path) if glob_pattern else literal
    if root is not None and not base.resolve().is_relative_to(root):
        plan.outside.append(target.path)
        return []
    files = _glob_files(target.path, cwd) if glob_pattern else _directory_files(literal)
    if not files:
        plan.empty_targets.append(target.path)
    planned: list[PlannedAdd] = []
    for path in files:
        if _hidden(path, base):
            continue
        if is_secret_path(path):
            plan.skipped_secret.append(path)
        elif looks_binary(path):
            plan.skipped_binary.append(path)
        else:
            planned.append(PlannedAdd(path, None, target.path, expanded=True))
    return planned


def _directory_files(directory: Path) -> list[Path]:
    listed = _git_listed_files(directory)
    if listed is None:
        listed = _walk_files(directory)
    return sorted(
        path for path in listed if not _in_skipped_directory(path, directory) and path.is_file()
    )


def _glob_files(pattern: str, cwd: Path) -> list[Path]:
    base = cwd / _literal_prefix(pattern)
    matches = [Path(match) for match in glob.glob(str(cwd / pattern), recursive=True)]
    files = [path for path in matches if path.is_file() and not _in_skipped_directory(path, base)]
    ignored = _git_ignored(files, cwd)
    return sorted(path for path in files if path not in ignored)


def _literal_prefix(pattern: str) -> Path:
    """The directories before the first wildcard: ``src/**/*.py`` → ``src``."""
    parts: list[str] = []
    for part in Path(pattern).parts:
        if any(character in part for character in "*?["):
            break
        parts.append(part)
    return Path(*parts) if parts else Path()


def _hidden(path: Path, base: Path) -> bool:
    """A part of ``path`` below ``base`` starts with a dot (what you named is not checked)."""
    try:
        relative = path.relative_to(base)
    except ValueError:
        return False
    return any(part.startswith(".") for part in relative.parts)


def _in_skipped_directory(path: Path, base: Path) -> bool:
    try:
        relative = path.relative_to(base)
    except ValueError:
        return False
    return any(part in SKIPPED_DIRECTORIES for part in relative.parts[:-1])


def _walk_files(directory: Path) -> list[Path]:
    files: list[Path] = []
    for root, directories, names in os.walk(directory):
        directories[:] = [name for name in directories if name not in SKIPPED_DIRECTORIES]
        files.extend(Path(root) / name for name in names)
    return files


def _git(directory: Path, arguments: Iterable[str], stdin: bytes | None = None) -> bytes | None:
    """Run git in ``directory``; ``None`` when git is missing or the command failed."""
    executable = shutil.which("git")
    if executable is None:
        return None
    try:
        completed = subprocess.run(
            [executable, "-C", str(directory), *arguments],
            input=stdin,
            capture_output=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    # check-ignore exits 1 when nothing is ignored; that is an answer, not a failure.
    return completed.stdout if completed.returncode in (0, 1) else None


def _git_listed_files(directory: Path) -> list[Path] | None:
    """Tracked and untracked-not-ignored files under ``directory``, or None outside git."""
    output = _git(directory, ["ls-files", "-z", "-co", "--exclude-standard", "--", "."])
    if output is None:
        return None
    return [
        directory / name for name in output.decode("utf-8", "surrogateescape").split("\0") if name
    ]


def _git_ignored(files: Sequence[Path], cwd: Path) -> set[Path]:
    """Which of ``files`` git ignores (tracked files never count as ignored)."""
    if not files:
        return set()
    paths = b"\0".join(os.fsencode(path) for path in files) + b"\0"
    output = _git(cwd, ["check-ignore", "-z", "--stdin"], stdin=paths)
    if output is None:
        return set()
    return {Path(os.fsdecode(name)) for name in output.split(b"\0") if name}
