"""The semantic extra's tables: its named migrations, and what ``install`` queues."""

from __future__ import annotations

import sqlite3
from typing import Final

from contextls.semantic.vectors import log_gone
from contextls.storage import migrations
from contextls.storage.migrations import Migration, Migrations

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
-- queued_at 0: not seen yet. The worker's side stamps the time it first sees an
-- entry (``stamp_window``); reading the clock here cost ~3 us of every add.
CREATE TRIGGER IF NOT EXISTS semantic_window_queued AFTER INSERT ON items BEGIN
    INSERT OR REPLACE INTO semantic_window_queue (root, id, queued_at)
    VALUES (new.root, new.id, 0);
END;
-- Evicted, forgotten or merged before it settled: nothing to embed any more.
CREATE TRIGGER IF NOT EXISTS semantic_window_left AFTER DELETE ON items BEGIN
    DELETE FROM semantic_window_queue WHERE root = old.root AND id = old.id;
END;
"""

SEMANTIC: Final = Migrations(prefix="semantic.", steps=(Migration("semantic.1_vectors", TABLES),))
"""The semantic extra's own named migrations (recorded with the store's)."""


def install(db: sqlite3.Connection, model: str) -> None:
    """Make the tables (the extra's migrations); queue every archived item without a
    vector of ``model``, and every window item without vectors made in the window.

    Runs in its own write transactions; cheap when nothing changed.
    """
    migrations.upgrade(db, SEMANTIC, "the context database")
    db.execute("BEGIN IMMEDIATE")
    try:
        row = db.execute("SELECT value FROM semantic_meta WHERE key = 'model'").fetchone()
        if row is None or row[0] != model:
            # New file, or another model made the vectors: they are all re-embedded.
            if row is not None:
                log_gone(db, "SELECT DISTINCT root, id FROM semantic_vectors")
            db.execute("DELETE FROM semantic_vectors")
            db.execute("DELETE FROM semantic_window")
            db.execute("DELETE FROM semantic_claims")
            db.execute("INSERT OR IGNORE INTO semantic_queue (rowid) SELECT rowid FROM archive")
            db.execute(
                "INSERT OR REPLACE INTO semantic_meta (key, value) VALUES ('model', ?)", (model,)
            )
        # Window items written while the extra was not installed (or by another model).
        db.execute(
            "INSERT OR IGNORE INTO semantic_window_queue (root, id, queued_at) "
            "SELECT root, id, 0 FROM items AS i WHERE NOT EXISTS (SELECT 1 FROM semantic_window "
            "AS w WHERE w.root = i.root AND w.id = i.id AND w.model = ?)",
            (model,),
        )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
