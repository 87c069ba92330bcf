"""The store: one SQLite database holding every workspace's window and archive.

It is made of one part per job, each in its own module: the connection (opening,
transactions, damage), the named migrations, the windows' rows, the archive's
rows, the archive's search index, and retention. This class joins them; callers
import what they name from here.
"""

from __future__ import annotations

from contextls.storage.connection import MEMORY, move_aside
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


class Store(WindowRows, SearchIndex, RetentionRows):
    """The windows, their counters, and the searchable archive of every workspace."""
