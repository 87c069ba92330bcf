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
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from contextls.core.items import Item
from contextls.storage.store import Store, WorkspaceRow

if TYPE_CHECKING:
    from contextls.app.workspace import Workspace

log = logging.getLogger(__name__)


def rescue_into_fresh_database(old: Store, workspaces: Sequence[Workspace]) -> tuple[Store, Path]:
    """Move the damaged file aside, create a fresh one, and write the windows into it."""
    salvaged = _salvage_archive(old)
    location = Path(old.location)
    with contextlib.suppress(sqlite3.Error):
        old.close()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    moved_to = location.with_name(f"{location.name}.damaged-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        side = location.with_name(location.name + suffix)
        if side.exists():
            side.replace(moved_to.with_name(moved_to.name + suffix))
    fresh = Store(location, _synchronous_name(old))
    with fresh.write():
        for root, items, reason, at in salvaged:
            fresh.archive(root, items, reason, at)
        for workspace in workspaces:
            window = workspace.window
            root = workspace.root_uri
            fresh.unarchive(root, [item.id for item in window])
            fresh.save_items(root, list(window))
            fresh.save_window_settings(root, workspace.chosen)
            fresh.save_workspace(
                root,
                WorkspaceRow(
                    window.next_id, window.next_seq, workspace.revision, workspace.evicted_total
                ),
            )
    log.warning("rescued %d windows into %s", len(workspaces), location)
    return fresh, moved_to


def _synchronous_name(store: Store) -> str:
    return "full" if store.synchronous == "FULL" else "normal"


def _salvage_archive(old: Store) -> list[tuple[str, list[Item], str, int]]:
    try:
        return old.archive_groups()
    except sqlite3.Error as error:
        log.warning("the archive could not be read from the damaged database: %s", error)
        return []
