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
import os
import stat
from pathlib import Path
from typing import Final

from contextls.common import runtime
from contextls.common.runtime import RUNTIME_DIR_ENV as RUNTIME_DIR_ENV
from contextls.common.runtime import STATE_DIR_ENV as STATE_DIR_ENV
from contextls.common.runtime import NotPrivate as NotPrivate
from contextls.common.runtime import PeerUnknown as PeerUnknown
from contextls.common.runtime import can_check_peers as can_check_peers
from contextls.common.runtime import peer_uid as peer_uid

DATABASE_NAME: Final = "contextls.sqlite3"
IN_MEMORY: Final = ":memory:"


def runtime_dir() -> Path:
    """The user's private directory for sockets, created 0700 and checked."""
    return Path(runtime.private_dir(runtime.runtime_dir_path()))


def state_dir() -> Path:
    """Where the default database and the daemons' logs live (the user state dir)."""
    override = os.environ.get(STATE_DIR_ENV)
    if override:
        return Path(override)
    return user_state_dir()


def user_state_dir() -> Path:
    plain = runtime.plain_state_dir()
    if plain is not None:
        return Path(plain)
    import platformdirs

    return Path(platformdirs.user_state_dir("contextls"))


CACHE_DIR_ENV: Final = "CONTEXTLS_CACHE_DIR"


def user_cache_dir() -> Path | None:
    """What a daemon may rebuild at any time but would rather not (parsed files, decoded
    vocabularies): ``$CONTEXTLS_CACHE_DIR``, else ``$XDG_CACHE_HOME/contextls``, else
    ``~/.cache/contextls``; None when none of them is an absolute path. The user's, not a
    database's: every daemon of the user shares it."""
    chosen = os.environ.get(CACHE_DIR_ENV, "")
    if chosen.startswith("/"):
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not base.startswith("/"):
        home = os.environ.get("HOME", "")
        if not home.startswith("/"):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / runtime.APP


def default_database() -> Path:
    return user_state_dir() / DATABASE_NAME


def resolve_storage(storage: str | None) -> str:
    """The database a client means: ``:memory:``, or an absolute path (the default
    database when none is named)."""
    if storage == IN_MEMORY:
        return storage
    if storage is None:
        return str(default_database())
    return str(Path(storage).expanduser().resolve())


def private_dir(directory: Path) -> Path:
    return Path(runtime.private_dir(str(directory)))


def database_key(storage: str | None) -> str:
    """A short name for a database: the same file always gives the same daemon, and
    another file (another ``$XDG_STATE_HOME``, say) another daemon."""
    return runtime.database_key(resolve_storage(storage))


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
