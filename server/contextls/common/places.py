"""Where the daemon listens and logs: a private directory per user, one socket per database.

Only the user may reach the daemon. Its socket lives in a directory that
must be the user's own, mode 0700, and not a symlink (checked every time,
never trusted); the daemon also checks each connecting process's uid
(``SO_PEERCRED``), and the clients check the daemon's. There is no TCP.

One daemon serves one database: the socket's name is derived from the
database's resolved path (the default one included), so ``--storage``,
``$CONTEXTLS_STORAGE`` or another ``$XDG_STATE_HOME`` each reach the daemon of
their own database, never another's. Without ``$XDG_RUNTIME_DIR`` (hosts that
spawn with a stripped environment) the runtime directory is still the login
session's ``/run/user/UID`` when it exists and is the user's, so such a process
reaches the same daemon as the user's shell. Imported by every CLI command: it
stays light (no asyncio, no pygls).
"""

from __future__ import annotations

import contextlib
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


LOGIN_RUNTIME_BASE: Final = Path("/run/user")
"""Where a login session's runtime directories are (``/run/user/UID``)."""
DATABASE_NAME: Final = "contextls.sqlite3"
IN_MEMORY: Final = ":memory:"


def runtime_dir() -> Path:
    """The user's private directory for sockets, created 0700 and checked."""
    override = os.environ.get(RUNTIME_DIR_ENV)
    if override:
        directory = Path(override)
    elif xdg := os.environ.get("XDG_RUNTIME_DIR"):
        directory = Path(xdg) / "contextls"
    elif (session := _login_runtime_dir()) is not None:
        directory = session / "contextls"
    else:
        directory = Path("/tmp") / f"contextls-{os.getuid()}"
    return private_dir(directory)


def _login_runtime_dir() -> Path | None:
    """``/run/user/UID`` when it exists and is the user's own, private directory: what
    ``$XDG_RUNTIME_DIR`` names in a login session, and what a stripped environment lacks."""
    candidate = LOGIN_RUNTIME_BASE / str(os.getuid())
    try:
        info = os.lstat(candidate)
    except OSError:
        return None
    private = stat.S_ISDIR(info.st_mode) and not info.st_mode & 0o077
    return candidate if private and info.st_uid == os.getuid() else None


def state_dir() -> Path:
    """Where the default database and the daemons' logs live (the user state dir)."""
    override = os.environ.get(STATE_DIR_ENV)
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_state_dir("contextls"))


def default_database() -> Path:
    import platformdirs

    return Path(platformdirs.user_state_dir("contextls")) / DATABASE_NAME


def resolve_storage(storage: str | None) -> str:
    """The database a client means: ``:memory:``, or an absolute path (the default
    database when none is named)."""
    if storage == IN_MEMORY:
        return storage
    if storage is None:
        return str(default_database())
    return str(Path(storage).expanduser().resolve())


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
    """A short name for a database: the same file always gives the same daemon, and
    another file (another ``$XDG_STATE_HOME``, say) another daemon."""
    return hashlib.sha256(resolve_storage(storage).encode()).hexdigest()[:16]


def socket_path(storage: str | None) -> Path:
    return runtime_dir() / f"daemon-{database_key(storage)}.sock"


def log_path(storage: str | None) -> Path:
    directory = state_dir()
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    keep_private(directory, 0o700)
    return directory / f"daemon-{database_key(storage)}.log"


def keep_private(path: Path, mode: int) -> str | None:
    """Take group and other permissions off ``path`` (a file or folder of the user's that
    holds context: the database, its journal, a log, the state folder); what was done,
    for the person to hear, or None when it was private already or is not there."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not info.st_mode & 0o077 or info.st_uid != os.getuid():
        return None
    try:
        os.chmod(path, mode)
    except OSError as error:
        return f"{path} can be read by others and could not be made private: {error.strerror}"
    return (
        f"{path} could be read by other users (mode {stat.S_IMODE(info.st_mode):o}); "
        f"it is now {mode:o}, since it holds your context"
    )


def private_file(path: Path) -> None:
    """Create ``path`` empty and 0600 if it does not exist (SQLite gives its journal files
    the database's mode, so they are born private too)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))


class PeerUnknown(Exception):
    """This platform cannot tell who is at the other end of a Unix socket."""


SOL_LOCAL: Final = 0
"""The socket level of ``LOCAL_PEERCRED`` (macOS and the BSDs)."""


def can_check_peers() -> bool:
    """Whether a daemon can check who connects: without it there is no daemon (a server
    per command instead), since anyone reaching the socket would get the windows."""
    return hasattr(socket, "SO_PEERCRED") or hasattr(socket, "LOCAL_PEERCRED")


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a Unix socket: Linux's ``SO_PEERCRED``,
    or the ``xucred`` of ``LOCAL_PEERCRED`` on macOS and the BSDs."""
    if hasattr(socket, "SO_PEERCRED"):
        credentials = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", credentials)
        return int(uid)
    local_peercred = getattr(socket, "LOCAL_PEERCRED", None)
    if local_peercred is None:
        raise PeerUnknown(
            "this platform cannot tell which user is at the other end of a Unix socket"
        )
    # struct xucred { u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t cr_groups[16]; }
    credentials = sock.getsockopt(SOL_LOCAL, local_peercred, struct.calcsize("IIh16I"))
    _version, uid = struct.unpack_from("II", credentials)
    return int(uid)
