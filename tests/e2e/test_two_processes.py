"""Two processes on one database: a daemon serving the CLI, an editor's own ``serve``, and
a ``CONTEXTLS_NO_DAEMON`` CLI, opened and closed in turn. Nothing acknowledged may be lost.

The hazard is POSIX's: closing *any* descriptor of a file releases *all* of the process's
fcntl locks on it. A process that opens the database (or its -wal/-shm) outside SQLite and
closes it again leaves its SQLite connection without locks; the other process, closing,
then believes it is the last one, checkpoints and deletes the WAL under it, and what the
first commits from then on goes to a deleted file. A killed process never closes, so kill
-9 runs cannot see this: here every process closes, again and again.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..cli.conftest import find_executable
from .conftest import Session, open_session, stop

ROUNDS = 24
REOPEN_EVERY = 4
"""The editor's server is closed and started again this often (rounds)."""
IDLE_PAUSE = 0.25
"""Long enough for each server's idle turn (search indexing, then a WAL checkpoint)."""


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    runtime = Path(tempfile.mkdtemp(prefix="cls-"))  # a socket path must fit in 107 bytes
    values = {
        **os.environ,
        "CONTEXTLS_STORAGE": str(tmp_path / "state" / "db.sqlite3"),
        "CONTEXTLS_RUNTIME_DIR": str(runtime),
        "CONTEXTLS_STATE_DIR": str(tmp_path / "logs"),
        "CONTEXTLS_CONFIG_DIR": str(tmp_path / "cfg"),
        "CONTEXTLS_DAEMON_IDLE": "120",
        "CONTEXTLS_SEMANTIC": "off",
    }
    yield values
    subprocess.run(
        [find_executable(), "daemon", "stop"], env=values, capture_output=True, timeout=60
    )
    shutil.rmtree(runtime, ignore_errors=True)


def cli_add(env: dict[str, str], cwd: Path, text: str, own_server: bool = False) -> str:
    """Add a note through the CLI; the id it was acknowledged with."""
    run_env = {**env, "CONTEXTLS_NO_DAEMON": "1"} if own_server else env
    done = subprocess.run(
        [find_executable(), "add-text", "--json", text],
        env=run_env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["item"]["id"])


async def editor(env: dict[str, str], workspace: Path) -> Session:
    storage = env["CONTEXTLS_STORAGE"]
    return await open_session(
        [find_executable(), "serve"], workspace, [workspace], {"storage": storage}, env=env
    )


def what_the_file_holds(storage: Path, root: Path) -> dict[str, str]:
    """id -> text of every item, in the window or the archive, read by a fresh connection."""
    db = sqlite3.connect(f"file:{storage}?mode=ro", uri=True)
    try:
        texts: dict[str, str] = {}
        for table in ("items", "archive"):
            for item_id, content in db.execute(f"SELECT id, content FROM {table}"):
                texts[str(item_id)] = str(content)
        return texts
    finally:
        db.close()


async def test_a_daemon_and_an_editors_own_server_lose_nothing_acknowledged(
    env: dict[str, str], workspace: Path
) -> None:
    acknowledged: dict[str, str] = {}
    # A window far larger than the run, so every note stays in it: ids are checked too.
    cli_add(env, workspace, "first note from the cli")
    subprocess.run(
        [find_executable(), "config", "set", "maxItems", "1000"],
        env=env,
        cwd=workspace,
        check=True,
        capture_output=True,
        timeout=60,
    )
    session = await editor(env, workspace)
    try:
        for round_ in range(ROUNDS):
            text = f"editor note {round_}"
            added: dict[str, Any] = await session.call("contextls/addText", content=text)
            acknowledged[added["item"]["id"]] = text
            await asyncio.sleep(IDLE_PAUSE)  # the editor's server checkpoints
            text = f"cli note {round_}"
            acknowledged[cli_add(env, workspace, text)] = text
            await asyncio.sleep(IDLE_PAUSE)  # the daemon checkpoints
            if round_ % 3 == 2:
                text = f"own-server cli note {round_}"
                acknowledged[cli_add(env, workspace, text, own_server=True)] = text
            if round_ % REOPEN_EVERY == REOPEN_EVERY - 1:
                await stop(session)  # the editor's server closes its database
                session = await editor(env, workspace)
    finally:
        await stop(session)
    subprocess.run([find_executable(), "daemon", "stop"], env=env, capture_output=True, timeout=60)

    storage = Path(env["CONTEXTLS_STORAGE"])
    held = what_the_file_holds(storage, workspace)
    lost = {item_id: text for item_id, text in acknowledged.items() if held.get(item_id) != text}
    assert not lost, f"{len(lost)} of {len(acknowledged)} acknowledged adds lost: {lost}"
    assert len(set(acknowledged)) == len(acknowledged), "an id was given twice"
    moved = [
        path.name
        for path in storage.parent.iterdir()
        if ".corrupt-" in path.name or ".damaged-" in path.name or ".unreadable-" in path.name
    ]
    assert not moved, f"a healthy database was moved aside: {moved}"


async def test_the_database_in_the_workspace_is_never_opened_as_a_file(
    tmp_path: Path, workspace: Path
) -> None:
    """A database kept in the project (``--storage ./context.sqlite3``) is not context, and
    reading it as a file (then closing it) would drop the server's own locks on it."""
    storage = workspace / "context.sqlite3"
    session = await open_session(
        [find_executable(), "serve"], workspace, [workspace], {"storage": str(storage)}
    )
    try:
        await session.call("contextls/addText", content="a note, so the WAL is there")
        for name in ("context.sqlite3", "context.sqlite3-wal", "context.sqlite3-shm"):
            assert (workspace / name).exists(), name
            refused = await session.error("contextls/addFile", uri=session.uri(name))
            assert "context database" in refused.message, refused.message
        link = workspace / "link-to-db"
        link.symlink_to(storage)
        refused = await session.error("contextls/addFile", uri=session.uri("link-to-db"))
        assert "context database" in refused.message
        bulk = await session.call(
            "contextls/addFiles", targets=[{"uri": workspace.as_uri()}], force=True
        )
        added = {item["metadata"].get("path") for item in bulk["items"]}
        assert not any(str(path).startswith("context.sqlite3") for path in added), added
        assert "src/app.py" in added
    finally:
        await stop(session)
