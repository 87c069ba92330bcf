"""What the archive may keep, pruning the rest, and giving the space back."""

from __future__ import annotations

import logging
import sqlite3
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Final

from contextls.storage.archive import ArchiveRows
from contextls.storage.connection import BUSY_TIMEOUT_MS, MEMORY, Database
from contextls.storage.errors import StorageError

log = logging.getLogger(__name__)

FTS_MERGE_PAGES: Final = 16
"""Pages of search-index merging after one prune batch (see ``give_back_space``)."""
VACUUM_STEP_PAGES: Final = 256
"""Free pages given back to the file system after one prune batch: moving pages to
fill the holes costs, and an idle turn must stay short (``bench_lifecycle.py``)."""


@dataclass(frozen=True, slots=True)
class Retention:
    """What the archive of one workspace may keep (0: no limit)."""

    max_items: int = 0
    max_bytes: int = 0
    max_age_days: float = 0

    @property
    def max_age_ms(self) -> int:
        return int(self.max_age_days * 86_400_000)


@dataclass(slots=True)
class ArchiveState:
    bytes: int = 0
    pruned_total: int = 0
    last_pruned: tuple[int, int, int, str] | None = None
    """(items, bytes, at, why) of the last prune."""


class RetentionRows:
    def __init__(self, connection: Database, archive: ArchiveRows) -> None:
        self.connection = connection
        self.archive = archive

    @property
    def _db(self) -> sqlite3.Connection:
        return self.connection._db

    def archive_state(self, root: str) -> ArchiveState:
        row = self._db.execute(
            "SELECT w.archive_bytes, coalesce(p.pruned_total, 0), p.last_count, p.last_bytes, "
            "p.last_at, p.last_why FROM workspaces AS w "
            "LEFT JOIN archive_pruning AS p ON p.root = w.root WHERE w.root = ?",
            (root,),
        ).fetchone()
        if row is None:
            return ArchiveState()
        bytes_, total, count, pruned_bytes, at, why = row
        last = (count, pruned_bytes, at, why) if count is not None else None
        return ArchiveState(int(bytes_), int(total), last)

    def prune(self, root: str, keep: Retention, now: int, batch: int) -> tuple[int, int, str]:
        """Delete the oldest archived items beyond ``keep`` (at most ``batch``).

        Returns (items, bytes, why); (0, 0, "") when nothing was over. Their
        search index entries go with them (the delete trigger).
        """
        doomed: list[int] = []
        why = ""
        if keep.max_age_ms:
            doomed = self._oldest(root, batch, before=now - keep.max_age_ms)
            why = f"older than archiveMaxAgeDays {keep.max_age_days:g}"
        if not doomed and keep.max_items:
            over = self.archive.archived_count(root) - keep.max_items
            if over > 0:
                doomed = self._oldest(root, min(over, batch))
                why = f"beyond archiveMaxItems {keep.max_items:,}"
        if not doomed and keep.max_bytes:
            state = self.archive_state(root)
            if state.bytes > keep.max_bytes:
                over_bytes = state.bytes - keep.max_bytes
                for rowid, size in self._db.execute(
                    "SELECT rowid, length(CAST(content AS BLOB)) FROM archive WHERE root = ? "
                    "ORDER BY archived_at, rowid LIMIT ?",
                    (root, batch),
                ):
                    doomed.append(rowid)
                    over_bytes -= size
                    if over_bytes <= 0:
                        break
                why = f"beyond archiveMaxBytes {keep.max_bytes:,}"
        if not doomed:
            return 0, 0, ""
        marks = ", ".join("?" * len(doomed))
        freed = self._db.execute(
            f"SELECT total(length(CAST(content AS BLOB))) FROM archive WHERE rowid IN ({marks})",
            doomed,
        ).fetchone()[0]
        self._db.execute(f"DELETE FROM archive WHERE rowid IN ({marks})", doomed)
        self._db.execute(
            "INSERT INTO archive_pruning (root, pruned_total, last_count, last_bytes, last_at, "
            "last_why) VALUES (?1, ?2, ?2, ?3, ?4, ?5) ON CONFLICT (root) DO UPDATE SET "
            "pruned_total = pruned_total + ?2, last_count = ?2, last_bytes = ?3, last_at = ?4, "
            "last_why = ?5",
            (root, len(doomed), int(freed), now, why),
        )
        return len(doomed), int(freed), why

    def _oldest(self, root: str, count: int, before: int | None = None) -> list[int]:
        """Rowids of the oldest archived items (archived before ``before``, if given)."""
        return [
            row[0]
            for row in self._db.execute(
                "SELECT rowid FROM archive WHERE root = ? AND archived_at < ? "
                "ORDER BY archived_at, rowid LIMIT ?",
                (root, (1 << 62) if before is None else before, count),
            )
        ]

    def give_back_space(self) -> int:
        """Merge the search index a step and return free pages to the file system;
        how many pages were free. Outside any transaction (it makes its own), and
        it does not wait for another process's lock: it is idle work.
        """
        if (
            self._db.in_transaction
            or self.connection.read_only is not None
            or self.connection.location == MEMORY
        ):
            return 0
        free = int(self._db.execute("PRAGMA freelist_count").fetchone()[0])
        # Deleted rows stay in the search index's segments as tombstones until the
        # segments merge; a bounded merge step after each prune keeps the index near
        # the size of what it indexes (measured: 15 MB -> 9 MB for 10,000 ~1 KB items).
        # incremental_vacuum frees one page per step of its statement, and Python's
        # execute() steps once: only executescript runs it to the end.
        self._db.execute("PRAGMA busy_timeout = 0")
        try:
            self._db.executescript(
                f"INSERT INTO archive_fts (archive_fts, rank) VALUES ('merge', {FTS_MERGE_PAGES});"
                f"PRAGMA incremental_vacuum({VACUUM_STEP_PAGES});"
            )
        except sqlite3.OperationalError as error:  # another process writes: next time
            log.info("giving free pages back waits: %s", error)
        finally:
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self.connection.checkpointed()
        return free

    def scrub(self) -> None:
        """After a commit that forgot items: leave no copy of their text in the files.

        The search index drops deleted entries only when its segments merge
        (``optimize``); ``VACUUM`` rewrites the file without free pages or the
        slack of old rows; the WAL, which holds the pages as they were, is
        checkpointed and truncated. Costs about a rewrite of the file.
        """
        if not self.connection.needs_scrub or self.connection.location == MEMORY:
            self.connection.needs_scrub = False
            return
        self.connection.needs_scrub = False
        db = self._db
        failed: list[str] = []
        # Each step on its own: on a nearly full disk the rewrites may find no room, and
        # the checkpoint that truncates the WAL (the last copy of the old pages) must
        # still run. The deleted text itself was zeroed by the delete (secure_delete).
        checkpointer = self.connection.checkpointer
        with checkpointer.held() if checkpointer is not None else nullcontext():
            for step in (
                "INSERT INTO archive_fts (archive_fts) VALUES ('optimize')",
                "PRAGMA wal_checkpoint(TRUNCATE)",
                "VACUUM",
                "PRAGMA wal_checkpoint(TRUNCATE)",
            ):
                name = step.split("(")[0].split()[-1].lower()
                try:
                    row = db.execute(step).fetchone()
                except sqlite3.OperationalError as error:
                    failed.append(f"{name}: {error}")
                    continue
                # A checkpoint another process's reader keeps from finishing says so in
                # its row (busy), not as an error: the WAL still holds the old pages.
                if step.startswith("PRAGMA") and row is not None and row[0]:
                    failed.append(f"{name}: the WAL is in use by another process")
        db.execute("PRAGMA secure_delete = OFF")
        self.connection.checkpointed()
        self.connection.reserve.keep()
        if failed:
            raise StorageError("; ".join(failed))
