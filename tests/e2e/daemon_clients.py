"""A daemon of its own for a test, and editors on it (``contextls connect --stdio``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import msgspec

from contextls.protocol import ServerInfo
from contextls_client.reports import DaemonReport

from ..cli.conftest import find_executable
from .conftest import Session, open_session, stop


def daemon_env(tmp_path: Path, workspace: Path) -> Iterator[dict[str, str]]:
    """Folders of the test's own for one daemon; the daemon is stopped at the end."""
    runtime = Path(tempfile.mkdtemp(prefix="cls-"))  # a socket path must fit in 107 bytes
    values = {
        **os.environ,
        "CONTEXTLS_STORAGE": str(tmp_path / "db.sqlite3"),
        "CONTEXTLS_RUNTIME_DIR": str(runtime),
        "CONTEXTLS_STATE_DIR": str(tmp_path / "logs"),
        "CONTEXTLS_CONFIG_DIR": str(tmp_path / "cfg"),
        "CONTEXTLS_DAEMON_IDLE": "120",
    }
    yield values
    contextls(values, workspace, "daemon", "stop")
    shutil.rmtree(runtime, ignore_errors=True)


def contextls(
    env: dict[str, str], cwd: Path, *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [find_executable(), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )
    if check and done.returncode != 0:
        raise AssertionError(f"contextls {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done


def daemon_info(env: dict[str, str], cwd: Path) -> ServerInfo:
    report = msgspec.json.decode(
        contextls(env, cwd, "daemon", "status", "--json").stdout, type=DaemonReport
    )
    assert report.running and report.server is not None
    return report.server


async def editors_on(env: dict[str, str], workspace: Path) -> AsyncIterator[list[Session]]:
    """Two editor sessions on the daemon, through ``contextls connect``."""
    sessions: list[Session] = []
    try:
        for _ in range(2):
            sessions.append(
                await open_session(
                    [find_executable(), "connect", "--stdio"],
                    workspace,
                    [workspace],
                    env=env,
                    cwd=workspace,
                )
            )
        yield sessions
    finally:
        for session in sessions:
            await stop(session)
