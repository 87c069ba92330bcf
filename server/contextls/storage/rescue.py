"""Saving the windows in memory when the database file was destroyed under the server.

Every change a client was told about is in the windows in memory, so they
are written into a fresh database; whatever else can still be read through
the old connection (the archive, windows of folders not open here) is copied
too, row by row, skipping what cannot be read.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextls.core.items import Item
from contextls.storage.store import Store, WorkspaceRow, move_aside

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WindowInMemory:
    """What a window held when the file went: all that the fresh database needs of it."""

    root: str
    items: list[Item]
    chosen: dict[str, Any]
    row: WorkspaceRow


def rescue_into_fresh_database(old: Store, windows: Sequence[WindowInMemory]) -> tuple[Store, Path]:
    """Move the damaged file aside, create a fresh one, and write the windows into it."""
    salvaged = _salvage_archive(old)
    location = Path(old.location)
    with contextlib.suppress(sqlite3.Error):
        old.close()
    moved_to = move_aside(location, "damaged")
    try:
        fresh = Store(location, "full" if old.synchronous == "FULL" else "normal")
    except BaseException:  # no fresh file (a full disk): the old one stays where it was
        put_back(moved_to, location)
        raise
    with fresh.write():
        for root, items, reason, at in salvaged:
            fresh.archive.add(root, items, reason, at)
        for window in windows:
            fresh.archive.delete_archived(window.root, [item.id for item in window.items])
            fresh.windows.save_items(window.root, window.items)
            fresh.windows.save_window_settings(window.root, window.chosen)
            fresh.windows.save_workspace(window.root, window.row)
    log.warning("rescued %d windows into %s", len(windows), location)
    return fresh, moved_to


def _salvage_archive(old: Store) -> list[tuple[str, list[Item], str, int]]:
    try:
        return old.archive.archive_groups()
    except sqlite3.Error as error:
        log.warning("the archive could not be read from the damaged database: %s", error)
        return []


def put_back(moved_to: Path, location: Path) -> None:
    """Undo ``move_aside``: the files at ``moved_to`` go back to ``location``."""
    for suffix in ("", "-wal", "-shm"):
        side = moved_to.with_name(moved_to.name + suffix)
        if side.exists():
            side.replace(location.with_name(location.name + suffix))
