"""Room kept on the database's disk for the one change that makes room: forgetting.

On a full disk every change fails, deleting rows included: SQLite writes the pages a
delete touches to the WAL before it frees anything, and ``forget`` also zeroes the
text where it lay and rewrites the file. So a small file is kept beside the database
(``NAME.reserve``, never opened by SQLite, so no lock of the database depends on it)
and given back just before a forget on a disk that is nearly full; it is made again
once there is room.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Final

RESERVE_BYTES: Final = 1024 * 1024
"""Enough for a forget of a large file's item (its pages in the WAL, the rewrite)."""
TIGHT: Final = 4
"""The disk is tight when it has less free than this many reserves."""


class Reserve:
    def __init__(self, location: str) -> None:
        self.path = Path(f"{location}.reserve")

    def keep(self) -> None:
        """Make the reserve if it is missing and the disk has room to spare for it (an
        eighth of what is free, at most ``RESERVE_BYTES``)."""
        if self.path.exists():
            return
        free = _free(self.path.parent)
        size = min(RESERVE_BYTES, free // 8)
        if size <= 0 or free < TIGHT * size:
            return
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except OSError:
            return
        try:
            os.write(fd, b"\0" * size)  # written, not sparse: the room is really taken
        except OSError:
            with contextlib.suppress(OSError):
                self.path.unlink()
        finally:
            os.close(fd)

    def release_if_tight(self) -> bool:
        """Give the reserve back when the disk is nearly full; whether it did."""
        try:
            size = self.path.stat().st_size
        except OSError:
            return False
        if _free(self.path.parent) >= TIGHT * max(size, 1):
            return False
        with contextlib.suppress(OSError):
            self.path.unlink()
            return True
        return False


def _free(folder: Path) -> int:
    try:
        stats = os.statvfs(folder)
    except OSError:
        return 0
    return stats.f_bavail * stats.f_frsize
