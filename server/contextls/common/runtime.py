"""Where a daemon listens, as strings, with the standard library's lightest modules only
(no pathlib, no platformdirs): what every CLI command computes before it says a word.

``places`` builds on it (and adds what the daemon itself needs); the CLI's quick path
uses it directly.
"""

from __future__ import annotations

import os
import socket
import stat
import struct
import sys

from contextls.common.digest import sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

RUNTIME_DIR_ENV: Final = "CONTEXTLS_RUNTIME_DIR"
"""Overrides where sockets live (tests; a user whose runtime dir is unusual)."""
STATE_DIR_ENV: Final = "CONTEXTLS_STATE_DIR"
"""Overrides where the daemon's log goes (default: the user state dir)."""
LOGIN_RUNTIME_BASE: Final = "/run/user"
"""Where a login session's runtime directories are (``/run/user/UID``)."""
DATABASE_NAME: Final = "contextls.sqlite3"
APP: Final = "contextls"


class NotPrivate(Exception):
    """The directory for the socket could be reached by someone else; it is not used."""


def runtime_dir_path() -> str:
    """The user's directory for sockets (not created, not checked; see ``private_dir``)."""
    override = os.environ.get(RUNTIME_DIR_ENV)
    if override:
        return override
    if xdg := os.environ.get("XDG_RUNTIME_DIR"):
        return os.path.join(xdg, APP)
    session = login_runtime_dir()
    if session is not None:
        return os.path.join(session, APP)
    return f"/tmp/{APP}-{os.getuid()}"


def login_runtime_dir() -> str | None:
    """``/run/user/UID`` when it exists and is the user's own, private directory: what
    ``$XDG_RUNTIME_DIR`` names in a login session, and what a stripped environment lacks."""
    candidate = f"{LOGIN_RUNTIME_BASE}/{os.getuid()}"
    try:
        info = os.lstat(candidate)
    except OSError:
        return None
    private = stat.S_ISDIR(info.st_mode) and not info.st_mode & 0o077
    return candidate if private and info.st_uid == os.getuid() else None


def private_dir(directory: str) -> str:
    """``directory``, created 0700, checked to be the user's own and private."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
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


def plain_state_dir() -> str | None:
    """The user state directory as platformdirs gives it (``user_state_dir``, without
    ``use_site_for_root``), where that is plain to see (Linux, ``$XDG_STATE_HOME`` absolute
    or not, ``$HOME`` absolute); None elsewhere (ask platformdirs)."""
    if sys.platform != "linux":
        return None
    xdg = os.environ.get("XDG_STATE_HOME", "")
    if xdg.startswith("/"):
        base = xdg
    else:
        home = os.environ.get("HOME", "")
        if not home.startswith("/"):
            return None
        base = os.path.join(home, ".local", "state")
    return os.path.join(base, APP)


def database_key(database: str) -> str:
    """A short name for a database (its resolved path): the same file always gives the
    same daemon, and another file (another ``$XDG_STATE_HOME``, say) another daemon."""
    return sha256(database.encode()).hexdigest()[:16]


def socket_name(database: str) -> str:
    return f"daemon-{database_key(database)}.sock"


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
