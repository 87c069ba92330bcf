"""Fixtures that run the installed ``contextls`` executable in a scratch workspace.

Every test gets its own workspace folder, SQLite file (``CONTEXTLS_STORAGE``),
settings directory (``CONTEXTLS_CONFIG_DIR``) and runtime directory for the
daemon's socket (``CONTEXTLS_RUNTIME_DIR``), so nothing touches the user's
real state and tests can run in any order. Commands go through a daemon of
the test's own, as a user's do; it is stopped when the test ends.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import msgspec
import pytest

T = TypeVar("T")
TIMEOUT_SECONDS = 60


def find_executable() -> str:
    """The console script installed next to this interpreter, else the one on PATH."""
    beside = Path(sys.executable).with_name("contextls")
    if beside.exists():
        return str(beside)
    found = shutil.which("contextls")
    if found is None:
        pytest.fail("the contextls executable is not installed: run `make setup`")
    return found


@dataclass(frozen=True)
class Run:
    """One finished invocation."""

    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str

    def decode(self, result_type: type[T]) -> T:
        """The ``--json`` output, decoded (and so validated) as ``result_type``."""
        return msgspec.json.decode(self.stdout, type=result_type)


class Cli:
    """Runs ``contextls`` in ``workspace`` with isolated storage and settings."""

    def __init__(self, executable: str, workspace: Path, state: Path, runtime: Path) -> None:
        self.executable = executable
        self.workspace = workspace
        self.runtime = runtime
        self.env = {
            **os.environ,
            "CONTEXTLS_STORAGE": str(state / "db.sqlite3"),
            "CONTEXTLS_CONFIG_DIR": str(state / "cfg"),
            "CONTEXTLS_RUNTIME_DIR": str(runtime),
            "CONTEXTLS_STATE_DIR": str(state / "logs"),
            "CONTEXTLS_DAEMON_IDLE": "120",  # a safety net: each test stops its own
            "NO_COLOR": "1",
        }

    def __call__(
        self, *args: str, stdin: str | None = None, cwd: Path | None = None, code: int | None = 0
    ) -> Run:
        """Run once; ``code`` is the exit code expected (None: any)."""
        completed = subprocess.run(
            [self.executable, *args],
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            cwd=cwd or self.workspace,
            env=self.env,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
        run = Run(tuple(args), completed.returncode, completed.stdout, completed.stderr)
        if code is not None and run.code != code:
            raise AssertionError(
                f"contextls {' '.join(args)} exited {run.code}, expected {code}\n"
                f"--- stdout ---\n{run.stdout}\n--- stderr ---\n{run.stderr}"
            )
        return run

    def write(self, relative: str, text: str) -> Path:
        path = self.workspace / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path


@pytest.fixture(scope="session")
def executable() -> str:
    return find_executable()


@pytest.fixture
def cli(executable: str, tmp_path: Path) -> Iterator[Cli]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    # A short directory: a Unix socket's path must fit in 107 bytes.
    runtime = Path(tempfile.mkdtemp(prefix="cls-"))
    runner = Cli(executable, workspace, tmp_path / "state", runtime)
    yield runner
    runner("daemon", "stop", code=None)
    shutil.rmtree(runtime, ignore_errors=True)
