"""The store's tables, as its named migrations make them."""

from __future__ import annotations

from typing import Final

from contextls.storage.migrations import Migration, Migrations

ARCHIVE_INDEXES: Final = """
CREATE INDEX IF NOT EXISTS archive_by_id ON archive (root, id);
CREATE INDEX IF NOT EXISTS archive_by_time ON archive (root, archived_at);
-- An archived copy of the same text is found by a hash of it: an index on the text's
-- length read every archived text of that length (~1 ms an eviction among 5,000
-- notes of one length, bench 1).
CREATE INDEX IF NOT EXISTS archive_by_digest ON archive (root, digest);
"""

FIRST_ARCHIVE_TRIGGERS: Final = """
CREATE TRIGGER IF NOT EXISTS archive_fts_queue AFTER INSERT ON archive BEGIN
    INSERT INTO archive_fts_backlog (rowid) VALUES (new.rowid);
END;
CREATE TRIGGER IF NOT EXISTS archive_fts_forget AFTER DELETE ON archive BEGIN
    INSERT INTO archive_fts (archive_fts, rowid, label, content)
    SELECT 'delete', old.rowid, old.label, old.content
    WHERE NOT EXISTS (SELECT 1 FROM archive_fts_backlog WHERE rowid = old.rowid);
    DELETE FROM archive_fts_backlog WHERE rowid = old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS archive_bytes_in AFTER INSERT ON archive BEGIN
    INSERT INTO archive_state (root) VALUES (new.root) ON CONFLICT (root) DO NOTHING;
    UPDATE archive_state SET bytes = bytes + length(CAST(new.content AS BLOB))
    WHERE root = new.root;
END;
CREATE TRIGGER IF NOT EXISTS archive_bytes_out AFTER DELETE ON archive BEGIN
    UPDATE archive_state SET bytes = bytes - length(CAST(old.content AS BLOB))
    WHERE root = old.root;
END;
"""
"""What kept the keyword index's backlog and each workspace's archive bytes, as steps 1
and 2 made them (step 3 replaces them): on the archive table, so made again with it."""

INITIAL: Final = (
    """
CREATE TABLE IF NOT EXISTS workspaces (
    root TEXT PRIMARY KEY,
    next_id INTEGER NOT NULL DEFAULT 1,
    next_seq INTEGER NOT NULL DEFAULT 1,
    revision INTEGER NOT NULL DEFAULT 0,
    evicted_total INTEGER NOT NULL DEFAULT 0,
    budget INTEGER NOT NULL DEFAULT 0
);
-- The settings chosen for a window (JSON, camelCase keys; the rest are defaults).
-- They live with the window so every client sees the same limits.
CREATE TABLE IF NOT EXISTS window_settings (
    root TEXT PRIMARY KEY,
    chosen TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS items (
    root TEXT NOT NULL,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    metadata TEXT NOT NULL,
    timestamp INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    encoding TEXT NOT NULL,
    pinned INTEGER NOT NULL,
    stale INTEGER NOT NULL,
    PRIMARY KEY (root, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS archive (
    rowid INTEGER PRIMARY KEY,
    root TEXT NOT NULL,
    id TEXT NOT NULL,
    kind TEXT NOT NULL,
    label TEXT NOT NULL,
    content TEXT NOT NULL,
    metadata TEXT NOT NULL,
    timestamp INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    encoding TEXT NOT NULL,
    pinned INTEGER NOT NULL,
    archived_at INTEGER NOT NULL,
    reason TEXT NOT NULL,
    digest BLOB
);
CREATE VIRTUAL TABLE IF NOT EXISTS archive_fts USING fts5 (
    label, content, content='archive', content_rowid='rowid', tokenize='unicode61'
);
-- Archive rows not yet in archive_fts. Indexing one row costs more than the
-- rest of an eviction (FTS5 writes a segment per transaction), so evictions
-- only queue their rows, and the index catches up in bulk: when the server is
-- idle, and always before a search (see ``SearchIndex.index_backlog``).
CREATE TABLE IF NOT EXISTS archive_fts_backlog (rowid INTEGER PRIMARY KEY);
-- Each workspace's archive in bytes (kept by triggers, so reading it never scans
-- the archive) and what retention pruned.
CREATE TABLE IF NOT EXISTS archive_state (
    root TEXT PRIMARY KEY,
    bytes INTEGER NOT NULL DEFAULT 0,
    pruned_total INTEGER NOT NULL DEFAULT 0,
    last_count INTEGER,
    last_bytes INTEGER,
    last_at INTEGER,
    last_why TEXT
);
-- An id merged into another item (overlapping regions, a whole file absorbing its
-- regions, a duplicate archived again) still names it.
CREATE TABLE IF NOT EXISTS aliases (
    root TEXT NOT NULL,
    id TEXT NOT NULL,
    target TEXT NOT NULL,
    PRIMARY KEY (root, id)
) WITHOUT ROWID;
"""
    + ARCHIVE_INDEXES
    + FIRST_ARCHIVE_TRIGGERS
)

ARCHIVE_ROWIDS_NEVER_REPEAT: Final = (
    """
-- Without AUTOINCREMENT a rowid freed at the end of the table (the newest item
-- restored) is given again: whoever indexes the archive outside this schema (the
-- semantic extra) finds new rows above the last rowid it saw, and would miss one.
ALTER TABLE archive RENAME TO archive_before_autoincrement;
CREATE TABLE archive (
    rowid INTEGER PRIMARY KEY AUTOINCREMENT,
    root TEXT NOT NULL,
    id TEXT NOT NULL,
    kind TEXT NOT NULL,
    label TEXT NOT NULL,
    content TEXT NOT NULL,
    metadata TEXT NOT NULL,
    timestamp INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    encoding TEXT NOT NULL,
    pinned INTEGER NOT NULL,
    archived_at INTEGER NOT NULL,
    reason TEXT NOT NULL,
    digest BLOB
);
INSERT INTO archive SELECT * FROM archive_before_autoincrement;
-- Its indexes and triggers go with it, and are made again on the new table.
DROP TABLE archive_before_autoincrement;
"""
    + ARCHIVE_INDEXES
    + FIRST_ARCHIVE_TRIGGERS
)

BOOKKEEPING_ON_PAGES_AN_ADD_WRITES: Final = """
-- A commit writes every page it touched, and an add's is on the path of its answer:
-- the archive's bookkeeping moves to pages an evicting add writes anyway.
--
-- The keyword index's backlog is the archive rows above a mark, as archive rowids
-- never repeat, instead of a table every eviction writes a row to.
INSERT INTO archive_fts (rowid, label, content)
    SELECT rowid, label, content FROM archive
    WHERE rowid IN (SELECT rowid FROM archive_fts_backlog);
CREATE TABLE archive_fts_mark (indexed_up_to INTEGER NOT NULL);
INSERT INTO archive_fts_mark SELECT coalesce(max(rowid), 0) FROM archive;
DROP TRIGGER archive_fts_queue;
DROP TRIGGER archive_fts_forget;
DROP TABLE archive_fts_backlog;
-- Only what the index holds is taken out of it.
CREATE TRIGGER archive_fts_forget AFTER DELETE ON archive BEGIN
    INSERT INTO archive_fts (archive_fts, rowid, label, content)
    SELECT 'delete', old.rowid, old.label, old.content
    WHERE old.rowid <= (SELECT indexed_up_to FROM archive_fts_mark);
END;
--
-- Each workspace's archive bytes live in its row of ``workspaces``, which every change
-- writes; what retention pruned, which changes only when it prunes, stays apart.
ALTER TABLE workspaces ADD COLUMN archive_bytes INTEGER NOT NULL DEFAULT 0;
INSERT INTO workspaces (root) SELECT root FROM archive_state WHERE true
    ON CONFLICT (root) DO NOTHING;
UPDATE workspaces SET archive_bytes = (
    SELECT bytes FROM archive_state WHERE archive_state.root = workspaces.root
) WHERE root IN (SELECT root FROM archive_state);
DROP TRIGGER archive_bytes_in;
DROP TRIGGER archive_bytes_out;
CREATE TABLE archive_pruning (
    root TEXT PRIMARY KEY,
    pruned_total INTEGER NOT NULL DEFAULT 0,
    last_count INTEGER,
    last_bytes INTEGER,
    last_at INTEGER,
    last_why TEXT
);
INSERT INTO archive_pruning (root, pruned_total, last_count, last_bytes, last_at, last_why)
    SELECT root, pruned_total, last_count, last_bytes, last_at, last_why FROM archive_state
    WHERE pruned_total > 0;
DROP TABLE archive_state;
CREATE TRIGGER archive_bytes_in AFTER INSERT ON archive BEGIN
    INSERT INTO workspaces (root) VALUES (new.root) ON CONFLICT (root) DO NOTHING;
    UPDATE workspaces SET archive_bytes = archive_bytes + length(CAST(new.content AS BLOB))
    WHERE root = new.root;
END;
CREATE TRIGGER archive_bytes_out AFTER DELETE ON archive BEGIN
    UPDATE workspaces SET archive_bytes = archive_bytes - length(CAST(old.content AS BLOB))
    WHERE root = old.root;
END;
"""

ITEMS_COUNTED_AS_RENDERED: Final = """
-- An item's tokens are those of its whole markdown section (heading, fences, text),
-- not of its text alone: every item is counted again when its window next loads.
UPDATE items SET encoding = '';
"""

IDENTIFIERS_AS_WORDS: Final = """
-- The keyword index also holds the words of the names in an item's text, so
-- "wednesday" finds previousWednesday and "weekend" isWeekend (the tokenizer keeps
-- such a name as one word). Those words are worked out when a row is indexed and kept
-- in archive_words, where the index's delete finds them again: a forgotten item's
-- words leave the index like its text. Every row is indexed again (the mark goes
-- back to 0), in batches when the server is idle, or at the first search.
DROP TRIGGER archive_fts_forget;
DROP TABLE archive_fts;
CREATE TABLE archive_words (rowid INTEGER PRIMARY KEY, words TEXT NOT NULL);
CREATE VIEW archive_fts_source AS
    SELECT a.rowid AS rowid, a.label AS label, a.content AS content,
           coalesce(w.words, '') AS words
    FROM archive AS a LEFT JOIN archive_words AS w ON w.rowid = a.rowid;
CREATE VIRTUAL TABLE archive_fts USING fts5 (
    label, content, words, content='archive_fts_source', content_rowid='rowid',
    tokenize='unicode61'
);
UPDATE archive_fts_mark SET indexed_up_to = 0;
CREATE TRIGGER archive_fts_forget AFTER DELETE ON archive BEGIN
    INSERT INTO archive_fts (archive_fts, rowid, label, content, words)
    SELECT 'delete', old.rowid, old.label, old.content,
           coalesce((SELECT words FROM archive_words WHERE rowid = old.rowid), '')
    WHERE old.rowid <= (SELECT indexed_up_to FROM archive_fts_mark);
    DELETE FROM archive_words WHERE rowid = old.rowid;
END;
"""

CORE: Final = Migrations(
    prefix="",
    steps=(
        Migration("1_initial", INITIAL),
        Migration("2_archive_rowids_never_repeat", ARCHIVE_ROWIDS_NEVER_REPEAT),
        Migration("3_bookkeeping_on_pages_an_add_writes", BOOKKEEPING_ON_PAGES_AN_ADD_WRITES),
        Migration("4_items_counted_as_rendered", ITEMS_COUNTED_AS_RENDERED),
        Migration("5_identifiers_as_words", IDENTIFIERS_AS_WORDS),
    ),
)
