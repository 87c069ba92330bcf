"""Reaching the user's daemon: find its socket, start it on demand, stop it.

The first command of a session starts the daemon (detached, logging to the
state dir) and later commands connect to it in a few milliseconds instead of
starting a server of their own. ``$CONTEXTLS_NO_DAEMON=1``, or an in-memory
database, keeps the old way: one server process per command.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import time
from pathlib import Path
from typing import Final

from contextls.common.environment import flag
from contextls.common.places import (
    NotPrivate,
    can_check_peers,
    log_path,
    peer_uid,
    resolve_storage,
    socket_path,
)

NO_DAEMON_ENV: Final = "CONTEXTLS_NO_DAEMON"
IDLE_ENV: Final = "CONTEXTLS_DAEMON_IDLE"
"""Seconds the daemon waits without clients before it exits (default: the daemon's)."""
START_TIMEOUT: Final = 20.0
"""Seconds to wait for a daemon that was just started to listen."""
START_POLL: Final = 0.01
"""Seconds between tries to reach a daemon that was just started. It listens ~0.4 s
after the spawn, on the path of a person's first command, and a try costs ~12 µs:
trying often finds it listening within 10 ms, for next to nothing."""
IN_MEMORY: Final = ":memory:"
LOG_LINES_SHOWN: Final = 12
"""Lines of a daemon's log shown when it could not start."""


class DaemonError(Exception):
    """The daemon cannot be started or reached; the message says why and where to look."""


def wanted(storage: str | None) -> bool:
    """Whether commands on this database go through the daemon: not for an in-memory
    database, not when asked not to, and not where the daemon could not check who
    connects (a server per command there)."""
    return (
        storage != IN_MEMORY
        and not flag(NO_DAEMON_ENV)
        and can_check_peers()
    )


def connect(path: Path) -> socket.socket | None:
    """A connection to the daemon of this user at ``path``, or None if none listens."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
        if peer_uid(sock) == os.getuid():
            return sock
    except OSError:
        pass
    sock.close()
    return None


def is_listening(path: Path) -> bool:
    """A daemon of this user answers on ``path``."""
    sock = connect(path)
    if sock is None:
        return False
    sock.close()
    return True


def stop_daemon(path: Path, pid: int, timeout: float = 10.0) -> None:
    """Ask the daemon ``pid`` to stop (it commits first) and wait until it stopped listening."""
    import signal

    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    # Stopped: it no longer listens, and its socket is gone (it closes, then unlinks it).
    while is_listening(path) or (path.exists() and _alive(pid)):
        if time.monotonic() > deadline:
            raise DaemonError(f"the daemon (pid {pid}) did not stop within {timeout:g}s")
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    """The process runs (a zombie nobody reaped yet has ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0] != b"Z"
    except (OSError, IndexError):
        return True  # no /proc (macOS): it answered the signal


def daemon_socket(storage: str | None) -> Path:
    try:
        return socket_path(storage)
    except NotPrivate as error:
        raise DaemonError(f"the daemon's directory is unsafe: {error}") from error


def connect_or_start(storage: str | None) -> socket.socket:
    """A connection to the daemon for ``storage``, started now if none listens."""
    path = daemon_socket(storage)
    sock = connect(path)
    if sock is not None:
        return sock
    import subprocess  # only to start the daemon: ~4 ms of every command otherwise

    log = log_path(storage)
    command = [*server_command("daemon"), "--storage", resolve_storage(storage)]
    command += ["--log-file", str(log)]
    start = log.stat().st_size if log.exists() else 0
    with open(os.devnull, "rb") as nothing, open(log, "ab") as log_stream:
        os.chmod(log, 0o600)
        process = subprocess.Popen(
            command,
            stdin=nothing,
            stdout=subprocess.DEVNULL,
            stderr=log_stream,  # what dies before logging is set up lands in the log too
            start_new_session=True,  # not killed with the terminal or the command
            close_fds=True,
            cwd="/",  # a daemon holds no project directory open
        )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        sock = connect(path)
        if sock is not None:
            return sock
        code = process.poll()
        if code is not None and code != 0:
            raise DaemonError(
                f"the daemon could not start (exit code {code}); {_log_tail(log, start)}"
            )
        time.sleep(START_POLL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    raise DaemonError(
        f"the daemon did not start listening within {START_TIMEOUT:g}s; {_log_tail(log, start)}"
    )


def server_command(*arguments: str) -> list[str]:
    """How to run the server (``serve``) or the daemon (``daemon``) with this interpreter.

    ``-P`` keeps the current directory off ``sys.path``: a project's own ``types.py``
    or ``logging.py`` would otherwise shadow the standard library's in the server.
    """
    return [sys.executable, "-P", "-m", "contextls", *arguments]


def _log_tail(log: Path, start: int) -> str:
    """The end of what the daemon wrote to its log since ``start``, for the person to read."""
    try:
        with log.open("rb") as stream:
            stream.seek(start)
            written = stream.read().decode("utf-8", "replace")
    except OSError:
        written = ""
    lines = [line for line in written.splitlines() if line.strip()][-LOG_LINES_SHOWN:]
    if not lines:
        return f"its log ({log}) says nothing"
    shown = "\n".join(f"  {line}" for line in lines)
    return f"the end of its log ({log}):\n{shown}"
