"""What a parse of a file found, kept on disk by the file's content, across restarts.

A repository's map needs the definitions and words of every file. Parsing them all is
most of a first map (CPython's ``Lib/``: ~2x a bare parse, in two processes), and a
restarted daemon, or a second checkout of the same code, would parse the same texts
again. So each file's facts are kept in a small SQLite file in the user's cache
directory, under the digest of its text and its language, and the build of the code
that made them (a new install drops what an older one found). The worker processes
read it, and one of them writes what they all found once the files are read, while
the map's process ranks them (the parse is the map's time; a writer thread in the
map's process would take the GIL in turns with its ranking).

Facts travel and are kept as MessagePack (``encode``): a third of pickle's time to make
and half of it to read for CPython's ``Lib/`` (0.08 + 0.13 s against 0.29 + 0.24 s), and
the bytes a worker sends are the bytes the cache keeps.

It is a cache: unreadable, locked or full, it is passed over, never an error.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Final

import msgspec

from contextls.common.places import user_cache_dir
from contextls.structure.model import Symbol
from contextls.structure.tags import FileFacts

log = logging.getLogger(__name__)

CACHE_ENV: Final = "CONTEXTLS_FACTS_CACHE"
"""A path for the cache file, or ``off`` (tests, benchmarks of a first parse)."""
_Encoded = tuple[str, list[Symbol], dict[str, int], dict[int, str]]
_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(_Encoded)


def encode(facts: FileFacts) -> bytes:
    return _encoder.encode((facts.language, facts.symbols, dict(facts.words), facts.headers))


def decode(data: bytes) -> FileFacts:
    """The facts ``encode`` made (``msgspec.DecodeError`` for anything else)."""
    language, symbols, words, headers = _decoder.decode(data)
    return FileFacts(language, symbols, Counter(words), headers)


Row = tuple[bytes, str, bytes]
"""(the text's digest, its language, its facts encoded)."""


def cache_path() -> Path | None:
    chosen = os.environ.get(CACHE_ENV, "")
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen)
    cache = user_cache_dir()
    return None if cache is None else cache / "facts.sqlite3"


class FactsCache:
    """One connection to the cache (a worker's, or a writer's for one batch)."""

    def __init__(self, path: Path | None, build: str) -> None:
        self.build = build
        self._db: sqlite3.Connection | None = None
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            db = sqlite3.connect(path, timeout=2, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            # A cache may lose its last writes to a power cut, never its consistency: in
            # WAL mode NORMAL syncs at checkpoints only (FULL synced each file's row, a
            # fifth of a first map of CPython's Lib/).
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS facts (digest BLOB NOT NULL, language TEXT NOT "
                "NULL, build TEXT NOT NULL, data BLOB NOT NULL, "
                "PRIMARY KEY (digest, language, build)) WITHOUT ROWID"
            )
            db.execute("DELETE FROM facts WHERE build != ?", (build,))
            self._db = db
        except (sqlite3.Error, OSError) as error:
            log.info("the facts cache %s is not used: %s", path, error)

    def get(self, digest: bytes, language: str) -> bytes | None:
        """The facts kept for this text, encoded (checked: they decode)."""
        if self._db is None:
            return None
        try:
            row = self._db.execute(
                "SELECT data FROM facts WHERE digest = ? AND language = ? AND build = ?",
                (digest, language, self.build),
            ).fetchone()
            if row is None:
                return None
            data: bytes = row[0]
            _decoder.decode(data)
        except (sqlite3.Error, msgspec.DecodeError):
            return None
        return data

    def put(self, rows: list[Row]) -> None:
        """Keep these facts, in one short transaction (one write of the WAL)."""
        if self._db is None or not rows:
            return
        try:
            with self._db:  # BEGIN ... COMMIT, or ROLLBACK on an error
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany(
                    "INSERT OR REPLACE INTO facts VALUES (?, ?, ?, ?)",
                    [(digest, language, self.build, data) for digest, language, data in rows],
                )
        except sqlite3.Error as error:  # full, locked, read-only: a cache may be passed over
            log.info("the facts cache was not written: %s", error)
            return
        # Into the database, and the log emptied: a worker keeps its connection, and the
        # log would stay as large as its largest write (a repository's facts). Another
        # worker reading may hold it up: then the log empties at a later write.
        with contextlib.suppress(sqlite3.Error):
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
