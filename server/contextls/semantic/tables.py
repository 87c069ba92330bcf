"""The semantic extra's tables: its named migrations, and what ``install`` queues.

The first step put triggers on the core's ``archive`` and ``items``; the second takes
them away again: the core's tables have one owner, and an add writes nothing here.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from contextls.semantic.vectors import log_gone
from contextls.storage import migrations
from contextls.storage.migrations import Migration, Migrations
from contextls.storage.transaction import write_transaction

TABLES: Final = """
CREATE TABLE IF NOT EXISTS semantic_vectors (
    rowid INTEGER PRIMARY KEY,
    root TEXT NOT NULL,
    id TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    model TEXT NOT NULL,
    vector BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS semantic_vectors_key ON semantic_vectors (root, id, chunk);
CREATE TABLE IF NOT EXISTS semantic_queue (rowid INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS semantic_claims (
    rowid INTEGER PRIMARY KEY,
    owner TEXT NOT NULL,
    until INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS semantic_gone (
    seq INTEGER PRIMARY KEY,
    root TEXT NOT NULL,
    id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS semantic_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS semantic_queue_archived AFTER INSERT ON archive BEGIN
    INSERT OR IGNORE INTO semantic_queue (rowid) VALUES (new.rowid);
END;
-- An item leaving the archive (restored, pruned, forgotten, merged) takes its
-- vectors along in the same transaction: a forget's secure_delete zeroes them too.
CREATE TRIGGER IF NOT EXISTS semantic_unarchived AFTER DELETE ON archive
WHEN EXISTS (SELECT 1 FROM semantic_vectors WHERE root = old.root AND id = old.id) BEGIN
    INSERT INTO semantic_gone (root, id) VALUES (old.root, old.id);
    DELETE FROM semantic_vectors WHERE root = old.root AND id = old.id;
END;
-- Items with vectors per root, kept by triggers (counting 100,000 rows took ~50 ms,
-- and status asks after every commit); written by the worker, never by an add.
CREATE TABLE IF NOT EXISTS semantic_counts (root TEXT PRIMARY KEY, indexed INTEGER NOT NULL);
CREATE TRIGGER IF NOT EXISTS semantic_counted AFTER INSERT ON semantic_vectors
WHEN new.chunk = 0 BEGIN
    INSERT INTO semantic_counts (root, indexed) VALUES (new.root, 1)
    ON CONFLICT (root) DO UPDATE SET indexed = indexed + 1;
END;
CREATE TRIGGER IF NOT EXISTS semantic_uncounted AFTER DELETE ON semantic_vectors
WHEN old.chunk = 0 BEGIN
    UPDATE semantic_counts SET indexed = indexed - 1 WHERE root = old.root;
END;
-- Window items: queued on every write of the item (a replace restarts the wait).
CREATE TABLE IF NOT EXISTS semantic_window_queue (
    root TEXT NOT NULL,
    id TEXT NOT NULL,
    queued_at INTEGER NOT NULL,
    PRIMARY KEY (root, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS semantic_window (
    rowid INTEGER PRIMARY KEY,
    root TEXT NOT NULL,
    id TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    digest BLOB NOT NULL,
    model TEXT NOT NULL,
    vector BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS semantic_window_key ON semantic_window (root, id, chunk);
-- queued_at 0: not seen yet (step 2 replaces this queue and drops the triggers).
CREATE TRIGGER IF NOT EXISTS semantic_window_queued AFTER INSERT ON items BEGIN
    INSERT OR REPLACE INTO semantic_window_queue (root, id, queued_at)
    VALUES (new.root, new.id, 0);
END;
-- Evicted, forgotten or merged before it settled: nothing to embed any more.
CREATE TRIGGER IF NOT EXISTS semantic_window_left AFTER DELETE ON items BEGIN
    DELETE FROM semantic_window_queue WHERE root = old.root AND id = old.id;
END;
"""

NO_TRIGGERS_ON_CORE_TABLES: Final = """
-- The extra reads the core's tables and writes only its own, so an add pays nothing
-- for search by meaning: new archive rows are found above a mark (archive rowids
-- never repeat), window items whose text has no vectors by a look at the windows
-- whose revision moved, and vectors of items that left the archive by a sweep.
DROP TRIGGER IF EXISTS semantic_queue_archived;
DROP TRIGGER IF EXISTS semantic_unarchived;
DROP TRIGGER IF EXISTS semantic_window_queued;
DROP TRIGGER IF EXISTS semantic_window_left;
DROP TABLE IF EXISTS semantic_window_queue;
-- Window items whose text has no vectors: the digest of that text, and when a
-- look first saw it (it is embedded once it has not changed for a while).
CREATE TABLE semantic_window_queue (
    root TEXT NOT NULL,
    id TEXT NOT NULL,
    digest BLOB NOT NULL,
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (root, id)
) WITHOUT ROWID;
-- Archived items without vectors, those archived while no trigger queued them too.
INSERT OR IGNORE INTO semantic_queue (rowid) SELECT rowid FROM archive AS a
WHERE NOT EXISTS (SELECT 1 FROM semantic_vectors AS v WHERE v.root = a.root AND v.id = a.id);
INSERT OR REPLACE INTO semantic_meta (key, value)
SELECT 'archive_mark', coalesce(max(rowid), 0) FROM archive;
"""

SEMANTIC: Final = Migrations(
    prefix="semantic.",
    steps=(
        Migration("semantic.1_vectors", TABLES),
        Migration("semantic.2_no_triggers_on_core_tables", NO_TRIGGERS_ON_CORE_TABLES),
    ),
)
"""The semantic extra's own named migrations (recorded with the store's)."""


def install(db: sqlite3.Connection, model: str) -> None:
    """Make the tables (the extra's migrations); when the vectors were made by another
    model (or none), queue every archived item again.

    Runs in its own write transactions; cheap when nothing changed. Window items are
    found by the engine's first look at each window.
    """
    migrations.upgrade(db, SEMANTIC, "the context database")
    with write_transaction(db):
        row = db.execute("SELECT value FROM semantic_meta WHERE key = 'model'").fetchone()
        if row is None or row[0] != model:
            # New file, or another model made the vectors: they are all re-embedded.
            if row is not None:
                log_gone(db, "SELECT DISTINCT root, id FROM semantic_vectors")
            db.execute("DELETE FROM semantic_vectors")
            db.execute("DELETE FROM semantic_window")
            db.execute("DELETE FROM semantic_window_queue")
            db.execute("DELETE FROM semantic_claims")
            db.execute("INSERT OR IGNORE INTO semantic_queue (rowid) SELECT rowid FROM archive")
            db.execute(
                "INSERT OR REPLACE INTO semantic_meta (key, value) "
                "SELECT 'archive_mark', coalesce(max(rowid), 0) FROM archive"
            )
            db.execute(
                "INSERT OR REPLACE INTO semantic_meta (key, value) VALUES ('model', ?)", (model,)
            )
