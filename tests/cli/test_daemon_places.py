"""The daemon starts wherever a person stands, and a client reaches its own database's daemon.

Each test runs the installed ``contextls`` as a person would: from a folder full
of files named like standard modules, with a daemon that cannot start, after the
code was installed again, with another state directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextls import __version__
from contextls.common import places, runtime

from .conftest import Cli

STDLIB_NAMES = [
    "types",
    "logging",
    "json",
    "random",
    "enum",
    "signal",
    "queue",
    "string",
    "select",
    "tokenize",
    "copy",
    "platform",
    "socket",
    "selectors",
    "struct",
    "uuid",
]
"""Module names a project may well have a file of (``click`` has ``types.py``)."""


@pytest.fixture
def shadowing(cli: Cli) -> Path:
    """A project folder whose files are named like the standard library's modules."""
    folder = cli.workspace / "src" / "pkg"
    folder.mkdir(parents=True)
    for name in STDLIB_NAMES:
        (folder / f"{name}.py").write_text(f"raise SystemExit('the project {name}.py ran')\n")
    return folder


def test_every_command_works_from_a_folder_that_shadows_the_standard_library(
    cli: Cli, shadowing: Path
) -> None:
    cli.write("src/pkg/app.py", "print('hello')\n")
    added = cli("add", "app.py", cwd=shadowing)
    assert "added ctx-1" in added.stdout
    status = cli("status", cwd=shadowing)
    assert "items      1 / 50" in status.stdout
    alone = cli("status", "--storage", ":memory:", cwd=shadowing)
    assert "items      0 / 50" in alone.stdout
    cli.env["CONTEXTLS_NO_DAEMON"] = "1"
    own = cli("ls", cwd=shadowing)
    assert "app.py" in own.stdout


def test_connect_bridges_to_the_daemon_from_a_folder_that_shadows_the_standard_library(
    cli: Cli, shadowing: Path
) -> None:
    """``contextls connect`` is what the editors spawn, in the project's folder."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": None, "rootUri": cli.workspace.as_uri(), "capabilities": {}},
    }
    body = json.dumps(initialize).encode()
    done = subprocess.run(
        [cli.executable, "connect"],
        input=b"Content-Length: %d\r\n\r\n%s" % (len(body), body),
        capture_output=True,
        cwd=shadowing,
        env=cli.env,
        timeout=60,
        check=False,
    )
    assert b'"id":1' in done.stdout.replace(b" ", b""), done.stderr.decode()
    assert b"capabilities" in done.stdout


def test_connect_help_says_what_it_does_and_starts_no_daemon(cli: Cli) -> None:
    run = cli("connect", "--help")
    assert run.stdout.startswith("usage: contextls connect")
    assert "share each workspace's window" in run.stdout
    assert not list(cli.runtime.iterdir())  # no daemon's socket: none was started


def test_connect_reads_a_file_or_nothing_as_its_input(cli: Cli, tmp_path: Path) -> None:
    """What epoll cannot watch (a regular file, ``/dev/null``) is still an editor's input."""
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "no/such"}).encode()
    request = tmp_path / "request.bin"
    request.write_bytes(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    for source in (request, Path(os.devnull)):
        with source.open("rb") as stdin:
            done = subprocess.run(
                [cli.executable, "connect"],
                stdin=stdin,
                capture_output=True,
                cwd=cli.workspace,
                env=cli.env,
                timeout=60,
                check=False,
            )
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode()
        if source == request:
            assert b'"id":7' in done.stdout.replace(b" ", b"") and b"-32601" in done.stdout


def test_a_daemon_that_dies_at_start_shows_why(cli: Cli, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    (broken / "pygls").mkdir(parents=True)
    (broken / "pygls" / "__init__.py").write_text(
        "raise ImportError('pygls cannot load in this environment')\n"
    )
    cli.env["PYTHONPATH"] = str(broken)
    run = cli("status", code=1)
    assert "the daemon could not start" in run.stderr
    assert "pygls cannot load in this environment" in run.stderr  # its own words, from its log
    log = places.log_path(cli.env["CONTEXTLS_STORAGE"])
    assert str(log.name) in run.stderr


def test_the_version_is_written_once() -> None:
    """pyproject reads the version from the package; the installed metadata agrees."""
    from importlib.metadata import version

    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert 'attr = "contextls.__version__"' in pyproject
    assert version("contextls") == __version__


@pytest.fixture
def installed_copy(tmp_path: Path) -> Iterator[Path]:
    """The packages copied elsewhere and put first on the path: an install we can change."""
    root = Path(__file__).parents[2]
    target = tmp_path / "site"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(root / "server" / "contextls", target / "contextls", ignore=ignore)
    shutil.copytree(
        root / "clients" / "python" / "contextls_client", target / "contextls_client", ignore=ignore
    )
    yield target


def test_a_daemon_running_code_installed_before_is_restarted_once(
    cli: Cli, installed_copy: Path
) -> None:
    cli.env["PYTHONPATH"] = str(installed_copy)
    cli("status")
    before = json.loads(cli("daemon", "--json").stdout)
    assert before["server"]["executable"] == sys.executable
    module = installed_copy / "contextls" / "core" / "errors.py"
    module.write_text(module.read_text() + "\n# installed again\n")
    again = cli("status")
    assert "installed again; restarting it" in again.stderr
    after = json.loads(cli("daemon", "--json").stdout)
    assert after["pid"] != before["pid"]
    assert after["server"]["build"] != before["server"]["build"]
    settled = cli("status")
    assert "restarting" not in settled.stderr


def test_each_state_directory_has_its_own_daemon_and_says_which_database(
    cli: Cli, tmp_path: Path
) -> None:
    """Without CONTEXTLS_STORAGE the database is the state dir's: another XDG_STATE_HOME
    is another database, and so another daemon, never the first one's."""
    del cli.env["CONTEXTLS_STORAGE"]
    first, second = tmp_path / "state-a", tmp_path / "state-b"
    cli.env["XDG_STATE_HOME"] = str(first)
    cli("add-text", "a note for the first database")
    a = json.loads(cli("daemon", "--json").stdout)
    cli.env["XDG_STATE_HOME"] = str(second)
    status = cli("status")
    assert "items      0 / 50" in status.stdout
    assert f"database   {second / 'contextls' / 'contextls.sqlite3'}" in status.stdout
    b = json.loads(cli("daemon", "--json").stdout)
    assert a["storage"] == str(first / "contextls" / "contextls.sqlite3")
    assert b["storage"] == str(second / "contextls" / "contextls.sqlite3")
    assert a["pid"] != b["pid"] and a["socket"] != b["socket"]
    cli("daemon", "stop")
    cli.env["XDG_STATE_HOME"] = str(first)


def test_daemon_shows_the_database_socket_and_log_when_none_runs(cli: Cli) -> None:
    run = cli("daemon", code=1)
    assert f"no daemon is running for {cli.env['CONTEXTLS_STORAGE']}" in run.stdout
    assert "it would listen on" in run.stdout and ".sock" in run.stdout
    assert "and log to" in run.stdout and ".log" in run.stdout


def test_without_xdg_runtime_dir_the_login_sessions_dir_is_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A host that spawns with only HOME PATH USER still reaches the shell's daemon:
    /run/user/UID when it is the user's own private directory."""
    monkeypatch.delenv(places.RUNTIME_DIR_ENV, raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    base = Path(tempfile.mkdtemp(prefix="run-"))
    monkeypatch.setattr(runtime, "LOGIN_RUNTIME_BASE", str(base))
    session = base / str(os.getuid())
    try:
        session.mkdir(mode=0o700)
        assert places.runtime_dir() == session / "contextls"
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(session))
        assert places.runtime_dir() == session / "contextls"  # the shell's answer is the same
        monkeypatch.delenv("XDG_RUNTIME_DIR")
        session.chmod(0o755)  # reachable by others: not a login session's directory
        assert places.runtime_dir() == Path("/tmp") / f"contextls-{os.getuid()}"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_without_peer_credentials_each_command_gets_a_server_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A platform that cannot tell who is at the other end of a socket (neither Linux's
    SO_PEERCRED nor the BSDs' LOCAL_PEERCRED) gets no daemon, and commands still work."""
    import socket

    from contextls_client import cli
    from contextls_client.daemon import wanted

    for name in ("SO_PEERCRED", "LOCAL_PEERCRED"):
        monkeypatch.delattr(socket, name, raising=False)
    assert not places.can_check_peers()
    assert not wanted(str(tmp_path / "db.sqlite3"))
    one, other = socket.socketpair(socket.AF_UNIX)
    with one, other, pytest.raises(places.PeerUnknown, match="cannot tell which user"):
        places.peer_uid(one)
    monkeypatch.setenv("CONTEXTLS_STORAGE", str(tmp_path / "db.sqlite3"))
    (tmp_path / "ws").mkdir()
    code = cli.main(["--workspace", str(tmp_path / "ws"), "add-text", "a note", "--json"])
    assert code == 0
    assert '"id": "ctx-1"' in capsys.readouterr().out


def test_a_runtime_folder_others_can_reach_is_refused_in_one_line(cli: Cli, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    cli.env["CONTEXTLS_RUNTIME_DIR"] = str(shared)
    for command in (("daemon",), ("daemon", "start"), ("status",)):
        run = cli(*command, code=1)
        assert "Traceback" not in run.stderr, run.stderr
        assert f"{shared} can be reached by others" in run.stderr and "chmod 700" in run.stderr
    served = subprocess.run(
        [sys.executable, "-m", "contextls", "daemon"],
        env=cli.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert served.returncode == 1 and "Traceback" not in served.stderr, served.stderr
    assert "can be reached by others" in served.stderr
