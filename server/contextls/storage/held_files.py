"""Which database files this process holds open through SQLite.

On POSIX, closing any descriptor of a file drops all of the process's fcntl locks on
it. SQLite's locks on the database, its WAL and its shared memory are what tell another
process it is not the last one there; lose them and that process, closing, checkpoints
and deletes the WAL under this one. So nothing in this process may open and close those
files except SQLite, which shares what it knows of a file among its own connections.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Final

JOURNALS: Final = ("", "-wal", "-shm", "-journal")

_OPEN: Final[Counter[str]] = Counter()
"""Where the databases this process holds open are (their locks live and die with it)."""


def opened(location: str) -> None:
    _OPEN[location] += 1


def closed(location: str) -> None:
    if location in _OPEN:
        _OPEN[location] -= 1
        if _OPEN[location] <= 0:
            del _OPEN[location]


def held_by_sqlite(path: str | Path) -> bool:
    """Whether ``path`` is one of the database files this process has open through SQLite
    (the database, its WAL, its shared memory or its journal), by inode, links included.

    Such a file must never be opened and closed by anything else in this process: on
    POSIX, closing any descriptor of a file drops all of the process's locks on it."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    for location in list(_OPEN):
        for suffix in JOURNALS:
            try:
                held = os.stat(location + suffix)
            except OSError:
                continue
            if (held.st_dev, held.st_ino) == (info.st_dev, info.st_ino):
                return True
    return False
