"""Searching the archive by its words: FTS5, ranked with bm25."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from contextls.core.items import Item
from contextls.core.snippets import Snippet, opening, snippet
from contextls.storage.connection import Database
from contextls.storage.rows import item_from_row

SEARCH_CANDIDATES: Final = 250
"""How many of the most recent matches a search ranks (see ``SearchIndex.search``)."""
_HIT_COLUMNS: Final = (
    "a.rowid AS rowid, a.id, a.kind, a.content, a.metadata, a.timestamp, a.tokens, a.encoding, "
    "a.pinned, a.archived_at, a.reason"
)
_WORD = re.compile(r"\w+", re.UNICODE)
_TOKEN = re.compile(r"[^\W_]+")
_JOINED = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]|[A-Za-z][0-9]|[0-9][A-Za-z]")
"""Where a word the tokenizer keeps whole joins words: ``previousWednesday``,
``XMLParser``, ``base64Encode``, ``utf8`` (``snake_case`` and ``kebab-case`` names are
split by the tokenizer itself)."""
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
TURN_ROWS: Final = 500
TURN_TOKENS: Final = 100_000
"""Archive rows an idle turn indexes, at most, and the tokens they hold at most (the
first row whatever it holds): a few milliseconds of the event loop, an 800 KB text
alone ~15 ms (500 of them in one turn: seconds)."""
WORDS_CHARS: Final = 256 * 1024
"""The text whose names are split into words: a name first seen past it is found whole."""


def name_words(text: str) -> list[str]:
    """The words of the joined names in ``text`` (camelCase, PascalCase, with digits), in
    lower case, each once, in the order first met: ``isWeekend(d)`` -> is, weekend.
    Words of one character are left out (the ``v`` of ``v2``)."""
    found: dict[str, None] = {}
    # Each distinct word once (a name recurs), and most words join nothing: the checks
    # in C first (~0.1 ms for a 1 KB item; a regex for joined words alone took 0.27).
    for word in dict.fromkeys(_TOKEN.findall(text[:WORDS_CHARS])):
        if (word.islower() and word.isalpha()) or not word.isascii():
            continue  # nothing to split; other scripts' letters are not split here
        if not _JOINED.search(word):
            continue
        for part in _PART.findall(word):
            if len(part) > 1:
                found.setdefault(part.lower())
    return list(found)


def _within(rows: list[tuple[int, int]], tokens: int) -> tuple[int, int]:
    """How many of these (rowid, tokens) rows, in order, hold at most ``tokens`` together
    (at least one), and the last one's rowid."""
    held = 0
    for count, (_, size) in enumerate(rows):
        held += size
        if held > tokens and count:
            return count, rows[count - 1][0]
    return len(rows), rows[-1][0] if rows else 0


MANY_ITEMS: Final = 2000
"""A word held by more items than this anywhere is taken to be in every workspace's
archive: making sure costs a walk over all of them (see ``term_counts``)."""


@dataclass(slots=True)
class ArchiveHit:
    item: Item
    score: float
    snippet: Snippet
    archived_at: int
    reason: str


class SearchIndex:
    def __init__(self, connection: Database) -> None:
        self.connection = connection

    @property
    def _db(self) -> sqlite3.Connection:
        return self.connection._db

    def index_backlog(self, limit: int | None = None, tokens: int | None = None) -> int:
        """Index (up to ``limit``) archive rows for search, oldest first; returns how many.
        With ``tokens``, the rows indexed hold at most that many tokens together (the
        first row whatever it holds): an idle turn of the event loop stays short when
        large texts were archived.

        The rows waiting are those above the mark (archive rowids never repeat). Runs in
        the caller's transaction, or in one of its own.
        """
        with self.connection.write():
            mark = self._indexed_up_to()
            waiting = "SELECT rowid, tokens FROM archive WHERE rowid > ? ORDER BY rowid LIMIT ?"
            bound = (mark, -1 if limit is None else limit)  # LIMIT -1: no limit
            if tokens is None:
                last = self._db.execute(f"SELECT count(*), max(rowid) FROM ({waiting})", bound)
                count, newest = last.fetchone()
            else:
                count, newest = _within(self._db.execute(waiting, bound).fetchall(), tokens)
            if not count:
                return 0
            rows = self._db.execute(
                "SELECT rowid, label, content FROM archive WHERE rowid > ? AND rowid <= ?",
                (mark, newest),
            ).fetchall()
            words = [
                (rowid, " ".join(name_words(f"{label}\n{content}")))
                for rowid, label, content in rows
            ]
            self._db.executemany(
                "INSERT OR REPLACE INTO archive_words (rowid, words) VALUES (?, ?)",
                [(rowid, text) for rowid, text in words if text],
            )
            self._db.execute(
                "INSERT INTO archive_fts (rowid, label, content, words) "
                "SELECT rowid, label, content, words FROM archive_fts_source "
                "WHERE rowid > ? AND rowid <= ?",
                (mark, newest),
            )
            self._db.execute("UPDATE archive_fts_mark SET indexed_up_to = ?", (newest,))
        return int(count)

    def index_turn(self) -> bool:
        """Index what one idle turn of the event loop may (``TURN_ROWS``, ``TURN_TOKENS``);
        whether more rows wait."""
        with self.connection.write():
            if not self.index_backlog(TURN_ROWS, TURN_TOKENS):
                return False
            waiting = "SELECT 1 FROM archive WHERE rowid > ? LIMIT 1"
            return self._db.execute(waiting, (self._indexed_up_to(),)).fetchone() is not None

    def behind(self) -> bool:
        """Whether archived rows wait to be indexed (a search would index them first)."""
        waiting = (
            "SELECT 1 FROM archive WHERE rowid > (SELECT indexed_up_to FROM archive_fts_mark) "
            "LIMIT 1"
        )
        return self._db.execute(waiting).fetchone() is not None

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
        if self.connection.read_only is None:  # a read-only file is searched as it is
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

    def term_counts(self, root: str, words: Sequence[str]) -> dict[str, int]:
        """How many archived items hold each of ``words`` (folded as the index folds them:
        lower case, no diacritics); 0 for a word no item of ``root`` holds.

        The counts are the index's own (``fts5vocab``: a lookup per word, ~0.05 ms) and
        cover every workspace of the file. With other workspaces in it, a word held here
        by nobody could be counted from theirs: a word held by few items is then looked
        for in this workspace's archive, which is fast when it is rare.
        """
        if self.connection.read_only is None:
            self.index_backlog()
        self._db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.archive_terms "
            "USING fts5vocab(main, 'archive_fts', 'row')"
        )
        unique = list(dict.fromkeys(words))
        holding = dict.fromkeys(unique, 0)
        if unique:
            marks = ", ".join("?" * len(unique))
            for term, count in self._db.execute(
                f"SELECT term, doc FROM temp.archive_terms WHERE term IN ({marks})", unique
            ):
                holding[term] = int(count)
        if any(holding.values()) and self._other_roots(root):
            for term, count in holding.items():
                if 0 < count <= MANY_ITEMS and not self._root_holds(root, term):
                    holding[term] = 0
        return holding

    def prefix_known(self, stem: str) -> bool:
        """Whether an indexed word (of any workspace) starts with ``stem``."""
        self._db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.archive_terms "
            "USING fts5vocab(main, 'archive_fts', 'row')"
        )
        row = self._db.execute(
            "SELECT 1 FROM temp.archive_terms WHERE term >= ? AND term < ? LIMIT 1",
            (stem, stem + "\U0010ffff"),
        ).fetchone()
        return row is not None

    def _other_roots(self, root: str) -> bool:
        # Two statements: min() and max() together scan the table, each alone reads the
        # index's first or last entry.
        first = self._db.execute("SELECT min(root) FROM archive").fetchone()[0]
        last = self._db.execute("SELECT max(root) FROM archive").fetchone()[0]
        return (first, last) != (root, root)

    def _root_holds(self, root: str, term: str) -> bool:
        return (
            self._db.execute(
                "SELECT 1 FROM archive_fts JOIN archive AS a ON a.rowid = archive_fts.rowid "
                "WHERE archive_fts MATCH ? AND a.root = ? LIMIT 1",
                (_quoted(term), root),
            ).fetchone()
            is not None
        )

    def archived_ids(self, root: str, query: str) -> list[str]:
        """Ids of archived items whose text holds every word of ``query`` (all of them)."""
        words = _WORD.findall(query)
        if not words:
            return []
        if self.connection.read_only is None:
            self.index_backlog()
        # The text's own words only: forgetting by a word takes no item for a name's part.
        match = "{label content} : (" + " AND ".join(_quoted(word) for word in words) + ")"
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
