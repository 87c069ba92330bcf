"""The shared daemon: many clients, one set of windows, private to its user.

Real processes throughout: the CLI starts the daemon on demand; editors are
the tests' own LSP clients (``tests.support.rpc``) that spawn ``contextls
connect`` (the stdio bridge an editor uses); another user is a child process
that gives up root.
"""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest
from lsprotocol import types as lsp

from contextls.common.places import NotPrivate, private_dir
from contextls.protocol import Status

from ..cli.conftest import find_executable
from .conftest import TIMEOUT, Session
from .daemon_clients import contextls, daemon_info


async def test_every_client_sees_one_window_and_each_change_at_once(
    editors: list[Session], env: dict[str, str], workspace: Path
) -> None:
    first, second = editors
    info = daemon_info(env, workspace)
    assert info.daemon and info.sessions == 3  # two editors, and the status command

    seen = [len(first.statuses), len(second.statuses)]
    added = contextls(env, workspace, "add", "README.md")
    assert "added ctx-1" in added.stdout
    for session, before in zip(editors, seen, strict=True):
        # At once: the push was queued at the add's commit, so it reaches each editor
        # before the answer to anything the editor asks after the command returned.
        await session.call("contextls/status")
        assert any(x["itemCount"] == 1 for x in session.statuses[before:]), session.statuses

    result = await second.call("contextls/addText", kind="text", content="from the second editor")
    assert result["item"]["id"] == "ctx-2"
    await first.call("contextls/status")  # answered after the push the add queued
    assert first.statuses[-1]["itemCount"] == 2
    listed = contextls(env, workspace, "ls", "--json").stdout
    assert "from the second editor" in listed


async def test_a_setting_changed_anywhere_holds_everywhere(
    editors: list[Session], env: dict[str, str], workspace: Path
) -> None:
    contextls(env, workspace, "config", "set", "maxItems", "3")
    for editor in editors:
        await editor.call("contextls/status")  # answered after the push the change queued
        assert editor.statuses[-1]["maxItems"] == 3
    status = msgspec.json.decode(contextls(env, workspace, "status", "--json").stdout, type=Status)
    assert status.max_items == 3


def test_the_cli_starts_the_daemon_and_status_and_stop_control_it(
    env: dict[str, str], workspace: Path
) -> None:
    stopped = contextls(env, workspace, "daemon", "status", check=False)
    assert stopped.returncode == 1 and "no daemon is running" in stopped.stdout

    contextls(env, workspace, "add", "README.md")
    info = daemon_info(env, workspace)
    assert info.storage == env["CONTEXTLS_STORAGE"] and info.workspaces == [workspace.as_uri()]
    assert info.semantic is not None and info.semantic.available and info.semantic.model
    path = _socket(env)
    mode = os.stat(path).st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700

    contextls(env, workspace, "daemon", "stop")
    assert not path.exists()
    assert _exits(info.pid)
    # The window outlived the daemon; the next command starts another.
    assert "README.md" in contextls(env, workspace, "ls").stdout
    assert daemon_info(env, workspace).pid != info.pid


def test_the_daemon_exits_when_idle(env: dict[str, str], workspace: Path) -> None:
    quick = {**env, "CONTEXTLS_DAEMON_IDLE": "0.5"}
    contextls(quick, workspace, "status")
    path = _socket(env)
    deadline = time.monotonic() + TIMEOUT
    while path.exists():
        assert time.monotonic() < deadline, "the idle daemon did not exit"
        time.sleep(0.05)


def test_a_daemon_killed_mid_command_is_restarted_and_the_command_retried(
    env: dict[str, str], workspace: Path
) -> None:
    contextls(env, workspace, "add", "README.md")
    old = daemon_info(env, workspace).pid
    os.kill(old, signal.SIGSTOP)  # it accepts the connection but never answers...
    command = subprocess.Popen(
        [find_executable(), "ls"],
        env=env,
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.5)
    os.kill(old, signal.SIGKILL)  # ...and dies
    out, err = command.communicate(timeout=60)
    assert command.returncode == 0, err
    assert "the daemon went away" in err and "starting it again" in err
    assert "README.md" in out
    assert daemon_info(env, workspace).pid != old


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as a second user")
def test_another_user_cannot_connect(env: dict[str, str], workspace: Path) -> None:
    contextls(env, workspace, "status")
    path = _socket(env)
    # The directory keeps them out...
    assert _connect_as_nobody(path) == "PermissionError"
    # ...and were it opened, the daemon would still refuse them.
    path.parent.chmod(0o711)
    path.chmod(0o777)
    try:
        assert _connect_as_nobody(path) == "refused"
    finally:
        path.chmod(0o700)
        path.parent.chmod(0o700)
    assert "refused a connection from uid 65534" in _log(env)


def test_a_runtime_dir_others_can_reach_is_not_used(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    with pytest.raises(NotPrivate, match="can be reached by others"):
        private_dir(shared)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    with pytest.raises(NotPrivate, match="symlink"):
        private_dir(link)


# ----------------------------------------------------------------- helpers


def _socket(env: dict[str, str]) -> Path:
    runtime = Path(env["CONTEXTLS_RUNTIME_DIR"])
    (found,) = runtime.glob("daemon-*.sock")
    return found


def _exits(pid: int, within: float = TIMEOUT) -> bool:
    """The process ends (a zombie nobody reaps counts: the daemon's parent is long gone)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        except FileNotFoundError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def _log(env: dict[str, str]) -> str:
    return "".join(path.read_text() for path in Path(env["CONTEXTLS_STATE_DIR"]).glob("*.log"))


def _connect_as_nobody(path: Path) -> str:
    """Connect as uid 65534 in a child process; what happened, in a word."""
    code = f"""
import os, socket, sys
os.setgid(65534); os.setuid(65534)
s = socket.socket(socket.AF_UNIX)
try:
    s.connect({str(path)!r})
except PermissionError:
    print("PermissionError"); sys.exit()
s.settimeout(5)
try:  # the daemon closes the connection at once: a write or a read finds it closed
    body = b'{{"jsonrpc":"2.0","id":1,"method":"contextls/status"}}'
    s.sendall(b'Content-Length: 52\\r\\n\\r\\n' + body)
    print("answered" if s.recv(100) else "refused")
except (BrokenPipeError, ConnectionResetError):
    print("refused")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    return done.stdout.strip() or done.stderr.strip()


@pytest.mark.parametrize(
    ("folder", "said"),
    [("/etc", "system folder"), ("~", "too wide")],
)
def test_a_refused_workspace_says_why_in_the_command_lines_words(
    env: dict[str, str], workspace: Path, folder: str, said: str
) -> None:
    done = contextls(env, workspace, "-w", str(Path(folder).expanduser()), "status", check=False)
    assert done.returncode == 1
    assert said in done.stderr, done.stderr
    assert "allowAnyFolder" not in done.stderr  # a setting of the editors, not of the CLI
    assert "pass --workspace DIR" in done.stderr or "CONTEXTLS_ALLOW_ANY_FOLDER" in done.stderr


def _open(session: Session, uri: str, text: str) -> None:
    session.notify(
        lsp.TEXT_DOCUMENT_DID_OPEN,
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        ),
    )


def _insert_at_top(session: Session, uri: str, version: int, text: str) -> None:
    at = lsp.Position(line=0, character=0)
    session.notify(
        lsp.TEXT_DOCUMENT_DID_CHANGE,
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=at), text=text)
            ],
        ),
    )


async def _lines_of_first_item(session: Session, lines: tuple[int, int]) -> None:
    deadline = time.monotonic() + TIMEOUT  # against a hang only
    while True:
        item = (await session.call("contextls/list"))["items"][0]
        if (item["metadata"]["startLine"], item["metadata"]["endLine"]) == lines:
            return
        assert time.monotonic() < deadline, f"the item never got to {lines}: {item['label']}"
        await asyncio.sleep(0.05)


async def test_two_editors_with_other_unsaved_text_the_last_to_change_it_is_followed(
    editors: list[Session], workspace: Path
) -> None:
    first, second = editors
    uri = first.uri("src/app.py")
    text = (workspace / "src" / "app.py").read_text()
    _open(first, uri, text)
    _open(second, uri, text)  # the same text: nobody is told anything
    await first.call("contextls/addRegion", **first.region("src/app.py", 4, 5))
    told = [len(first.messages), len(second.messages)]

    # The first editor types three lines above, unsaved: the window follows its text, and
    # the second editor, whose text differs now, is told so.
    _insert_at_top(first, uri, 2, "# a\n# b\n# c\n")
    await _lines_of_first_item(first, (7, 8))
    await second.wait_for(lambda: len(second.messages) > told[1])
    assert (
        "app.py has other unsaved text in another editor, which changed it last"
        in (second.messages[-1])
    )
    await first.wait_for(lambda: len(first.messages) > told[0])
    assert (
        "the window follows the text here, since this editor changed it last"
        in (first.messages[-1])
    )

    # The second editor types one line above in its own text: now its text is followed
    # (its edits reach the window again), and the first editor is told.
    told = [len(first.messages), len(second.messages)]
    _insert_at_top(second, uri, 2, "# z\n")
    await _lines_of_first_item(first, (5, 6))
    await first.wait_for(lambda: len(first.messages) > told[0])
    assert "which changed it last" in first.messages[-1]
    item = (await second.call("contextls/list"))["items"][0]
    assert not item["stale"] and item["content"] == "def f2():\n    return 2\n"
