"""Where the daemon listens and logs: a private directory per user, one socket per database.

Only the user may reach the daemon. Its socket lives in a directory that
must be the user's own, mode 0700, and not a symlink (checked every time,
never trusted); the daemon also checks each connecting process's uid
(``SO_PEERCRED``), and the clients check the daemon's. There is no TCP.

One daemon serves one database: the socket's name is derived from the
database's path, so ``--storage`` (or ``$CONTEXTLS_STORAGE``) picks its own
daemon. Imported by every CLI command: it stays light (no asyncio, no pygls).
"""

from __future__ import annotations

import hashlib
import os
import socket
import stat
import struct
from pathlib import Path
from typing import Final

RUNTIME_DIR_ENV: Final = "CONTEXTLS_RUNTIME_DIR"
"""Overrides where sockets live (tests; a user whose runtime dir is unusual)."""
STATE_DIR_ENV: Final = "CONTEXTLS_STATE_DIR"
"""Overrides where the daemon's log goes (default: the user state dir)."""


class NotPrivate(Exception):
    """The directory for the socket could be reached by someone else; it is not used."""


def runtime_dir() -> Path:
    """The user's private directory for sockets, created 0700 and checked."""
    override = os.environ.get(RUNTIME_DIR_ENV)
    if override:
        directory = Path(override)
    elif xdg := os.environ.get("XDG_RUNTIME_DIR"):
        directory = Path(xdg) / "contextls"
    else:
        directory = Path("/tmp") / f"contextls-{os.getuid()}"
    return private_dir(directory)


def private_dir(directory: Path) -> Path:
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        raise NotPrivate(f"cannot create {directory}: {error.strerror}") from error
    info = os.lstat(directory)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise NotPrivate(f"{directory} is not a directory of its own (a symlink?); remove it")
    if info.st_uid != os.getuid():
        raise NotPrivate(f"{directory} belongs to uid {info.st_uid}, not you; remove it")
    if info.st_mode & 0o077:
        raise NotPrivate(
            f"{directory} can be reached by others (mode {stat.S_IMODE(info.st_mode):o}); "
            f"run `chmod 700 {directory}` or remove it"
        )
    return directory


def database_key(storage: str | None) -> str:
    """A short name for a database: the same path always gives the same daemon."""
    if storage is None:
        return "default"
    return hashlib.sha256(str(Path(storage).expanduser().resolve()).encode()).hexdigest()[:16]


def socket_path(storage: str | None) -> Path:
    return runtime_dir() / f"daemon-{database_key(storage)}.sock"


def log_path(storage: str | None) -> Path:
    override = os.environ.get(STATE_DIR_ENV) or os.environ.get(RUNTIME_DIR_ENV)
    if override:
        directory = Path(override)
    else:
        import platformdirs

        directory = Path(platformdirs.user_state_dir("contextls"))
    directory.mkdir(parents=True, exist_ok=True)
    return directory / f"daemon-{database_key(storage)}.log"


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a Unix socket (Linux ``SO_PEERCRED``)."""
    credentials = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", credentials)
    return int(uid)
