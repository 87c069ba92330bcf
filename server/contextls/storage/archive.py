"""The archive's rows: what left the windows, kept to be searched and restored."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Final

from contextls.core.items import Item
from contextls.storage.connection import Database
from contextls.storage.rows import ITEM_COLUMNS, item_from_row, text_digest, to_json

EVICTION_REASONS: Final = ("maxItems", "maxTokens")
ID_BATCH: Final = 500
"""Ids per ``IN (...)`` list: well under SQLite's limit on bound values."""


class ArchiveRows:
    def __init__(self, connection: Database) -> None:
        self.connection = connection

    @property
    def _db(self) -> sqlite3.Connection:
        return self.connection._db

    def add(
        self,
        root: str,
        items: Sequence[Item],
        reason: str,
        at: int,
        digests: Sequence[bytes] | None = None,
    ) -> int:
        """Add items that left a window to the archive; returns how many. ``digests``:
        their texts' (``archived_copies`` made them), else worked out here.

        An id is never in the window and the archive at once (restoring takes
        it out of the archive), so there is nothing to replace. The workspace
        keeps its archive count with this, without ``count(*)`` over a large
        archive.
        """
        if digests is None:
            digests = [text_digest(item.content) for item in items]
        rows = [
            (
                root,
                item.id,
                item.kind,
                item.label,
                item.content,
                to_json(item.metadata),
                item.timestamp,
                item.tokens,
                item.encoding,
                item.pinned,
                at,
                reason,
                digest,
            )
            for item, digest in zip(items, digests, strict=True)
        ]
        self._db.executemany(
            "INSERT INTO archive (root, id, kind, label, content, metadata, timestamp, tokens, "
            "encoding, pinned, archived_at, reason, digest) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        return len(rows)

    def delete_archived(self, root: str, ids: Iterable[str]) -> int:
        """Drop archive entries (restored, merged, forgotten); how many there were.

        Their search index entries and byte counts go with them (the store's triggers).
        """
        wanted = list(ids)
        gone = 0
        for start in range(0, len(wanted), ID_BATCH):
            batch = wanted[start : start + ID_BATCH]
            marks = ", ".join("?" * len(batch))
            cursor = self._db.execute(
                f"DELETE FROM archive WHERE root = ? AND id IN ({marks})", (root, *batch)
            )
            gone += max(cursor.rowcount, 0)  # rows of this statement, not of its triggers
        return gone

    def forget(self, root: str, ids: Sequence[str]) -> int:
        """Delete these archived items (and their index entries); how many rows went.

        ``secure_delete`` is on for the deletes, so their text is zeroed where it lay;
        ``scrub`` after the commit removes what other pages still hold.
        """
        # On before anything is deleted: the window's rows go after this, too.
        self._db.execute("PRAGMA secure_delete = ON")
        self.connection.needs_scrub = True
        return self.delete_archived(root, ids)

    def archived(self, root: str, ids: list[str]) -> dict[str, Item]:
        found: dict[str, Item] = {}
        for item_id in ids:
            row = self._db.execute(
                f"SELECT {ITEM_COLUMNS} FROM archive WHERE root = ? AND id = ?", (root, item_id)
            ).fetchone()
            if row is not None:
                found[item_id] = item_from_row(row)
        return found

    def archived_summaries(self, root: str, ids: Sequence[str]) -> list[Item]:
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        rows = self._db.execute(
            f"SELECT {ITEM_COLUMNS} FROM archive WHERE root = ? AND id IN ({marks}) ORDER BY rowid",
            (root, *ids),
        ).fetchall()
        return [item_from_row(row) for row in rows]

    def archive_groups(self) -> list[tuple[str, list[Item], str, int]]:
        """Every archive entry as (root, [item], reason, archived_at), oldest first."""
        rows = self._db.execute(
            f"SELECT root, {ITEM_COLUMNS}, reason, archived_at FROM archive ORDER BY rowid"
        ).fetchall()
        return [(row[0], [item_from_row(row[1:9])], row[9], row[10]) for row in rows]

    def archive_rows(self, root: str) -> list[tuple[Item, int, str]]:
        """Every archived item of a workspace, oldest first, with when and why it went."""
        rows = self._db.execute(
            f"SELECT {ITEM_COLUMNS}, archived_at, reason FROM archive WHERE root = ? "
            "ORDER BY archived_at, rowid",
            (root,),
        ).fetchall()
        return [(item_from_row(row[:8]), int(row[8]), str(row[9])) for row in rows]

    def archive_places(self, root: str, ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        """``archived_at`` and ``reason`` of archived items (the latest entry per id)."""
        if not ids:
            return {}
        marks = ", ".join("?" * len(ids))
        rows = self._db.execute(
            f"SELECT id, archived_at, reason FROM archive WHERE root = ? AND id IN ({marks}) "
            "ORDER BY rowid",
            (root, *ids),
        )
        return {row[0]: (row[1], row[2]) for row in rows}

    def archived_count(self, root: str) -> int:
        return int(
            self._db.execute("SELECT count(*) FROM archive WHERE root = ?", (root,)).fetchone()[0]
        )

    def oldest_archived_at(self, root: str) -> int | None:
        row = self._db.execute(
            "SELECT min(archived_at) FROM archive WHERE root = ?", (root,)
        ).fetchone()
        return None if row[0] is None else int(row[0])

    def last_evicted(self, root: str, limit: int) -> list[Item]:
        rows = self._db.execute(
            f"SELECT {ITEM_COLUMNS} FROM archive WHERE root = ? AND reason IN (?, ?) "
            "ORDER BY archived_at DESC, rowid DESC LIMIT ?",
            (root, *EVICTION_REASONS, limit),
        ).fetchall()
        return [item_from_row(row) for row in reversed(rows)]

    def archived_duplicates(self, root: str, item: Item) -> list[str]:
        """Ids of archived items with the same source and text as ``item``."""
        return self.archived_copies(root, [item])[0][1]

    def archived_copies(self, root: str, items: Sequence[Item]) -> list[tuple[bytes, list[str]]]:
        """For each of ``items``, its text's digest and the ids of the archived items with
        the same source and text: a query a batch of digests (a clear of 800 files made
        800 queries, ~70 ms) and each text read once for its digest."""
        digests = [text_digest(item.content) for item in items]
        candidates: dict[bytes, list[tuple[str, str, str, object]]] = {}
        wanted = list(dict.fromkeys(digests))
        for start in range(0, len(wanted), ID_BATCH):
            batch = wanted[start : start + ID_BATCH]
            marks = ", ".join("?" * len(batch))
            rows = self._db.execute(
                "SELECT digest, id, kind, content, json_extract(metadata, '$.path') "
                f"FROM archive INDEXED BY archive_by_digest WHERE root = ? AND digest IN ({marks})",
                (root, *batch),
            )
            for digest, copy_id, kind, content, copy_source in rows:
                candidates.setdefault(digest, []).append((copy_id, kind, content, copy_source))
        found = []
        for item, digest in zip(items, digests, strict=True):
            path = item.metadata.get("path")
            source = path if isinstance(path, str) else None
            found.append(
                (
                    digest,
                    [
                        copy_id
                        for copy_id, kind, content, copy_source in candidates.get(digest, ())
                        if kind == item.kind and content == item.content and copy_source == source
                    ],
                )
            )
        return found

    # ---------------------------------------------------------------- aliases

    def save_aliases(self, root: str, aliases: dict[str, str]) -> None:
        self._db.executemany(
            "INSERT INTO aliases (root, id, target) VALUES (?, ?, ?) "
            "ON CONFLICT (root, id) DO UPDATE SET target = excluded.target",
            [(root, old, new) for old, new in aliases.items()],
        )

    def alias_targets(self, root: str, ids: Sequence[str]) -> dict[str, str]:
        """Where each merged-away id went (one step; callers follow chains)."""
        if not ids:
            return {}
        marks = ", ".join("?" * len(ids))
        return dict(
            self._db.execute(
                f"SELECT id, target FROM aliases WHERE root = ? AND id IN ({marks})",
                (root, *ids),
            ).fetchall()
        )
