"""Searching the archive by its words: FTS5, ranked with bm25."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from contextls.core.items import Item
from contextls.core.snippets import Snippet, opening, snippet
from contextls.storage.connection import Connection
from contextls.storage.rows import item_from_row

SEARCH_CANDIDATES: Final = 250
"""How many of the most recent matches a search ranks (see ``SearchIndex.search``)."""
_HIT_COLUMNS: Final = (
    "a.rowid AS rowid, a.id, a.kind, a.content, a.metadata, a.timestamp, a.tokens, a.encoding, "
    "a.pinned, a.archived_at, a.reason"
)
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(slots=True)
class ArchiveHit:
    item: Item
    score: float
    snippet: Snippet
    archived_at: int
    reason: str


class SearchIndex(Connection):
    def index_backlog(self, limit: int | None = None) -> int:
        """Index (up to ``limit``) archive rows for search, oldest first; returns how many.

        The rows waiting are those above the mark (archive rowids never repeat). Runs in
        the caller's transaction, or in one of its own.
        """
        with self.write():
            mark = self._indexed_up_to()
            waiting = "SELECT rowid FROM archive WHERE rowid > ? ORDER BY rowid LIMIT ?"
            bound = (mark, -1 if limit is None else limit)  # LIMIT -1: no limit
            last = self._db.execute(f"SELECT count(*), max(rowid) FROM ({waiting})", bound)
            count, newest = last.fetchone()
            if not count:
                return 0
            self._db.execute(
                "INSERT INTO archive_fts (rowid, label, content) "
                "SELECT rowid, label, content FROM archive WHERE rowid > ? AND rowid <= ?",
                (mark, newest),
            )
            self._db.execute("UPDATE archive_fts_mark SET indexed_up_to = ?", (newest,))
        return int(count)

    def _indexed_up_to(self) -> int:
        return int(self._db.execute("SELECT indexed_up_to FROM archive_fts_mark").fetchone()[0])

    def search(
        self, root: str, query: str, limit: int, kinds: Sequence[str] | None = None
    ) -> list[ArchiveHit]:
        """bm25-ranked archive hits: all words first; if none match, any word.

        Only the ``SEARCH_CANDIDATES`` most recently archived matches are
        ranked: ranking every match of a common word costs ~30 ms on a
        100,000-item archive, the most recent 250 about 4.
        """
        words = _WORD.findall(query)
        if not words:
            return []
        if self.read_only is None:  # a read-only file is searched as it is
            self.index_backlog()
        quoted = [_quoted(word) for word in words]
        hits = self._match(root, " AND ".join(quoted), words, limit, kinds)
        if not hits and len(quoted) > 1:
            hits = self._match(root, " OR ".join(quoted), words, limit, kinds)
        return hits

    def _match(
        self,
        root: str,
        match: str,
        words: Sequence[str],
        limit: int,
        kinds: Sequence[str] | None,
    ) -> list[ArchiveHit]:
        kind_filter = ""
        params: list[Any] = [match, root]
        if kinds:
            kind_filter = f" AND a.kind IN ({', '.join('?' * len(kinds))})"
            params.extend(kinds)
        params.extend((SEARCH_CANDIDATES, limit))
        # bm25 for the most recent candidates only; snippets for the hits only.
        rows = self._db.execute(
            "SELECT * FROM ("
            f"SELECT {_HIT_COLUMNS}, bm25(archive_fts, 2.0, 1.0) AS rank "
            "FROM archive_fts JOIN archive AS a ON a.rowid = archive_fts.rowid "
            f"WHERE archive_fts MATCH ? AND a.root = ?{kind_filter} "
            "ORDER BY archive_fts.rowid DESC LIMIT ?"
            ") ORDER BY rank, rowid DESC LIMIT ?",
            params,
        ).fetchall()
        hits = []
        for row in rows:
            item = item_from_row(row[1:9])
            hits.append(
                ArchiveHit(
                    item=item,
                    score=-float(row[11]),
                    snippet=snippet(item.content, words)
                    or snippet(item.label, words)
                    or opening(item.content),
                    archived_at=row[9],
                    reason=row[10],
                )
            )
        return hits

    def archived_ids(self, root: str, query: str) -> list[str]:
        """Ids of archived items whose text holds every word of ``query`` (all of them)."""
        words = _WORD.findall(query)
        if not words:
            return []
        if self.read_only is None:
            self.index_backlog()
        match = " AND ".join(_quoted(word) for word in words)
        return [
            row[0]
            for row in self._db.execute(
                "SELECT a.id FROM archive_fts JOIN archive AS a ON a.rowid = archive_fts.rowid "
                "WHERE archive_fts MATCH ? AND a.root = ? ORDER BY a.rowid",
                (match, root),
            )
        ]


    def archived_ids_of_paths(self, root: str, paths: list[str]) -> list[str]:
        """Ids of archived items from these files (workspace-relative ``metadata.path``)."""
        if not paths:
            return []
        marks = ", ".join("?" for _ in paths)
        return [
            row[0]
            for row in self._db.execute(
                f"SELECT id FROM archive WHERE root = ? "
                f"AND json_extract(metadata, '$.path') IN ({marks}) ORDER BY rowid",
                (root, *paths),
            )
        ]


def _quoted(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'
