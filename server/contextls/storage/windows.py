"""The windows' rows: items, counters and chosen settings of each workspace."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import msgspec

from contextls.core.items import Item
from contextls.storage.connection import Database
from contextls.storage.rows import ITEM_COLUMNS, item_from_row, to_json


@dataclass(slots=True)
class WorkspaceRow:
    next_id: int
    next_seq: int
    revision: int
    evicted_total: int
    budget: int = 0
    """The adaptive budget the window has reached (0: none yet, or the fixed policy)."""


class WindowRows:
    def __init__(self, connection: Database) -> None:
        self.connection = connection

    @property
    def _db(self) -> sqlite3.Connection:
        return self.connection._db

    def workspace(self, root: str) -> WorkspaceRow:
        row = self._db.execute(
            "SELECT next_id, next_seq, revision, evicted_total, budget FROM workspaces "
            "WHERE root = ?",
            (root,),
        ).fetchone()
        if row is None:
            return WorkspaceRow(1, 1, 0, 0)
        return WorkspaceRow(*row)

    def save_workspace(self, root: str, row: WorkspaceRow) -> None:
        self._db.execute(
            "INSERT INTO workspaces (root, next_id, next_seq, revision, evicted_total, budget) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (root) DO UPDATE SET "
            "next_id = excluded.next_id, next_seq = excluded.next_seq, "
            "revision = excluded.revision, evicted_total = excluded.evicted_total, "
            "budget = excluded.budget",
            (root, row.next_id, row.next_seq, row.revision, row.evicted_total, row.budget),
        )

    def window_settings(self, root: str) -> dict[str, Any]:
        """The settings chosen for this window (camelCase keys), or {}."""
        row = self._db.execute(
            "SELECT chosen FROM window_settings WHERE root = ?", (root,)
        ).fetchone()
        if row is None:
            return {}
        chosen = msgspec.json.decode(row[0])
        return chosen if isinstance(chosen, dict) else {}

    def save_window_settings(self, root: str, chosen: dict[str, Any]) -> None:
        if not chosen:
            self._db.execute("DELETE FROM window_settings WHERE root = ?", (root,))
            return
        self._db.execute(
            "INSERT INTO window_settings (root, chosen) VALUES (?, ?) "
            "ON CONFLICT (root) DO UPDATE SET chosen = excluded.chosen",
            (root, to_json(chosen)),
        )

    def load_window(self, root: str) -> list[Item]:
        rows = self._db.execute(
            f"SELECT {ITEM_COLUMNS}, stale, seq FROM items WHERE root = ? ORDER BY seq", (root,)
        ).fetchall()
        return [item_from_row(row[:8], stale=bool(row[8]), seq=row[9]) for row in rows]

    def save_items(self, root: str, items: Iterable[Item]) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO items (root, id, seq, kind, content, metadata, timestamp, "
            "tokens, encoding, pinned, stale) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    root,
                    item.id,
                    item.seq,
                    item.kind,
                    item.content,
                    to_json(item.metadata),
                    item.timestamp,
                    item.tokens,
                    item.encoding,
                    item.pinned,
                    item.stale,
                )
                for item in items
            ],
        )

    def delete_items(self, root: str, ids: Iterable[str]) -> None:
        self._db.executemany(
            "DELETE FROM items WHERE root = ? AND id = ?", [(root, item_id) for item_id in ids]
        )
