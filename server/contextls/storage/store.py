"""The store: one SQLite database holding every workspace's window and archive.

It is the connection (opening, transactions, damage; the named migrations) and one
object per table it owns, each in its own module, holding that connection and reached
as an attribute (as sqlite-utils' ``Database`` and ``Table``): ``windows`` (the windows'
rows, their settings and counters), ``archive`` (what left them, and aliases), ``index``
(the archive's search index) and ``retention`` (what the archive keeps). Callers
import what they name from here.
"""

from __future__ import annotations

from typing import Any

from contextls.storage.archive import ArchiveRows
from contextls.storage.connection import MEMORY, Database, move_aside
from contextls.storage.errors import NewerSchema, StorageError
from contextls.storage.retention import ArchiveState, Retention, RetentionRows
from contextls.storage.rows import text_digest
from contextls.storage.search_index import ArchiveHit, SearchIndex
from contextls.storage.windows import WindowRows, WorkspaceRow

__all__ = [
    "MEMORY",
    "ArchiveHit",
    "ArchiveState",
    "NewerSchema",
    "Retention",
    "StorageError",
    "Store",
    "WorkspaceRow",
    "move_aside",
    "text_digest",
]


class Store(Database):
    """The windows, their counters, and the searchable archive of every workspace."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.windows = WindowRows(self)
        self.archive = ArchiveRows(self)
        self.index = SearchIndex(self)
        self.retention = RetentionRows(self, self.archive)
