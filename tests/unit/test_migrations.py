"""One migration scheme: named steps, applied once, recorded; newer files left alone."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from contextls.core.items import Item
from contextls.storage import migrations
from contextls.storage.schema import CORE
from contextls.storage.store import NewerSchema, Store


def shape(path: Path) -> list[tuple[str, str, str]]:
    """Every table, index and trigger with its SQL: what a schema is."""
    db = sqlite3.connect(path)
    try:
        rows = db.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' "
            "ORDER BY type, name"
        ).fetchall()
    finally:
        db.close()
    return [(kind, name, " ".join((sql or "").split())) for kind, name, sql in rows]


def applied(path: Path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return [row[0] for row in db.execute("SELECT name FROM migrations ORDER BY rowid")]
    finally:
        db.close()


def note(text: str, item_id: str = "ctx-1") -> Item:
    return Item(item_id, "text", text, {}, 0, 3, encoding="o200k_base")


def test_a_new_database_has_every_step_recorded(tmp_path: Path) -> None:
    Store(tmp_path / "new.db").close()
    assert applied(tmp_path / "new.db") == [step.name for step in CORE.steps]
    assert CORE.steps[0].name == "1_initial"


@pytest.mark.parametrize("released", range(len(CORE.steps) + 1))
def test_a_database_of_every_released_schema_reaches_the_current_one(
    tmp_path: Path, released: int
) -> None:
    """A file made by the first ``released`` steps (as that release left it) is brought
    to exactly what a new database is, and keeps its rows."""
    Store(tmp_path / "fresh.db").close()
    old = tmp_path / "old.db"
    db = sqlite3.connect(old, isolation_level=None)
    for step in CORE.steps[:released]:
        for statement in migrations.statements(step.script):
            db.execute(statement)
    db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at INTEGER)")
    db.executemany(
        "INSERT INTO migrations VALUES (?, 0)", [(step.name,) for step in CORE.steps[:released]]
    )
    db.close()
    if released:
        store = Store(old)
        with store.write():
            store.archive.add("r", [note("kept across the upgrade")], "maxItems", 1)
        store.close()
    store = Store(old)
    assert shape(old) == shape(tmp_path / "fresh.db")
    assert applied(old) == [step.name for step in CORE.steps]
    if released:
        assert [item.content for item, _, _ in store.archive.archive_rows("r")] == [
            "kept across the upgrade"
        ]
    store.close()


def test_a_file_of_a_development_build_is_adopted_with_its_rows(tmp_path: Path) -> None:
    """Such a file holds what the first step makes, its version in ``meta``."""
    path = tmp_path / "dev.db"
    db = sqlite3.connect(path, isolation_level=None)
    for statement in migrations.statements(CORE.steps[0].script):
        db.execute(statement)
    db.execute(
        "INSERT INTO archive (root, id, kind, label, content, metadata, timestamp, tokens, "
        "encoding, pinned, archived_at, reason) VALUES "
        "('r', 'ctx-1', 'text', 'note', 'from a development build', '{}', 0, 3, "
        "'o200k_base', 0, 1, 'maxItems')"
    )
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('schema', ?)", (migrations.LEGACY_SCHEMA,))
    db.close()
    store = Store(path)
    assert [hit.item.content for hit in store.index.search("r", "development", 5)] == [
        "from a development build"
    ]
    store.close()
    assert applied(path) == [step.name for step in CORE.steps]  # adopted as 1, then on
    assert "meta" not in {name for _, name, _ in shape(path)}


def test_an_unreadable_development_file_is_kept_aside_and_a_fresh_one_made(
    tmp_path: Path,
) -> None:
    path = tmp_path / "older.db"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('schema', '3')")
    db.close()
    store = Store(path)
    assert store.moved_aside is not None and store.moved_aside.name.startswith("older.db.")
    assert "development build" in store.moved_why and "schema 3" in store.moved_why
    kept = sqlite3.connect(store.moved_aside)
    assert kept.execute("SELECT value FROM meta").fetchone() == ("3",)  # nothing lost
    kept.close()
    store.close()
    assert applied(path) == [step.name for step in CORE.steps]


def test_a_newer_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "newer.db"
    Store(path).close()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("INSERT INTO migrations VALUES ('2_from_a_newer_contextls', 0)")
    db.close()
    before = shape(path)
    with pytest.raises(NewerSchema, match=r"newer contextls .*2_from_a_newer_contextls"):
        Store(path)
    assert shape(path) == before
    assert applied(path)[-1] == "2_from_a_newer_contextls"


def test_another_owners_steps_are_not_a_newer_schema(tmp_path: Path) -> None:
    """The semantic extra records its own steps in the same table."""
    path = tmp_path / "shared.db"
    Store(path).close()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("INSERT INTO migrations VALUES ('semantic.9_later', 0)")
    db.close()
    Store(path).close()


def test_opening_an_up_to_date_database_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "same.db"
    Store(path).close()
    watcher = sqlite3.connect(path)
    changes = watcher.execute("PRAGMA data_version").fetchone()[0]
    Store(path).close()
    assert watcher.execute("PRAGMA data_version").fetchone()[0] == changes
    watcher.close()


def test_a_rowid_freed_at_the_end_of_the_archive_is_not_given_again(tmp_path: Path) -> None:
    """Whoever indexes the archive outside the store finds new rows above the last
    rowid it saw: the newest item restored must not hand its rowid to the next."""
    store = Store(tmp_path / "s.db")
    with store.write():
        store.archive.add("r", [note("first")], "maxItems", 1)
    db = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    (first,) = db.execute("SELECT max(rowid) FROM archive").fetchone()
    with store.write():  # restored: it leaves the archive
        assert store.archive.delete_archived("r", ["ctx-1"]) == 1
    with store.write():
        store.archive.add("r", [note("second")], "maxItems", 1)
    (second,) = db.execute("SELECT max(rowid) FROM archive").fetchone()
    db.close()
    store.close()
    assert second > first


def _made_by_steps(path: Path, count: int) -> sqlite3.Connection:
    """A file as the first ``count`` steps left it (no rows yet)."""
    db = sqlite3.connect(path, isolation_level=None)
    for step in CORE.steps[:count]:
        for statement in migrations.statements(step.script):
            db.execute(statement)
    db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at INTEGER)")
    db.executemany("INSERT INTO migrations VALUES (?, 0)", [(s.name,) for s in CORE.steps[:count]])
    return db


def _fts_consistent(path: Path) -> None:
    db = sqlite3.connect(path)
    try:  # rank 1: also compare with the archive's rows (a row missing or twice)
        db.execute("INSERT INTO archive_fts (archive_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        db.close()


def test_the_backlog_and_the_bytes_of_step_2_files_are_kept(tmp_path: Path) -> None:
    """Rows indexed and rows still in the backlog are all found after the upgrade; each
    workspace's bytes and what retention pruned are the same numbers as before."""
    path = tmp_path / "step2.db"
    db = _made_by_steps(path, 2)
    columns = (
        "root, id, kind, label, content, metadata, timestamp, tokens, encoding, pinned, "
        "archived_at, reason"
    )
    add = (
        f"INSERT INTO archive ({columns}) VALUES (?, ?, 'text', ?, ?, '{{}}', 0, 3, 'x', 0, 1, 'r')"
    )
    db.execute(add, ("a", "ctx-1", "indexed", "alpha indexed already"))
    db.execute(
        "INSERT INTO archive_fts (rowid, label, content) "
        "SELECT rowid, label, content FROM archive WHERE rowid IN "
        "(SELECT rowid FROM archive_fts_backlog)"
    )
    db.execute("DELETE FROM archive_fts_backlog")
    db.execute(add, ("a", "ctx-2", "waiting", "alpha still waiting"))
    db.execute(add, ("b", "ctx-1", "other", "beta naïve"))
    db.execute(
        "UPDATE archive_state SET pruned_total = 4, last_count = 4, last_bytes = 90, "
        "last_at = 7, last_why = 'older than archiveMaxAgeDays 30' WHERE root = 'a'"
    )
    before = dict(db.execute("SELECT root, bytes FROM archive_state"))
    db.close()
    store = Store(path)
    assert applied(path) == [step.name for step in CORE.steps]
    assert sorted(hit.item.id for hit in store.index.search("a", "alpha", 5)) == ["ctx-1", "ctx-2"]
    assert [hit.item.id for hit in store.index.search("b", "beta", 5)] == ["ctx-1"]
    assert {root: store.retention.archive_state(root).bytes for root in before} == before
    assert before == {"a": len("alpha indexed already") + len("alpha still waiting"), "b": 11}
    pruned = store.retention.archive_state("a")
    assert (pruned.pruned_total, pruned.last_pruned) == (
        4,
        (4, 90, 7, "older than archiveMaxAgeDays 30"),
    )
    assert store.retention.archive_state("b").pruned_total == 0
    store.close()
    _fts_consistent(path)


def test_an_idle_turn_indexes_large_texts_one_at_a_time(tmp_path: Path) -> None:
    """The archive's index catches up on the event loop, a turn at a time: archived texts
    of many tokens are indexed one per turn, small ones together, each once."""
    from contextls.storage.search_index import TURN_TOKENS

    path = tmp_path / "s.db"
    store = Store(path)
    large = [
        Item(f"ctx-{n}", "text", f"large{n} " * 50, {}, 0, TURN_TOKENS // 2 + 1, encoding="e")
        for n in range(3)
    ]
    small = [note(f"small{n} text", f"ctx-{n + 3}") for n in range(20)]
    with store.write():
        store.archive.add("r", [*large, *small], "x", 1)

    def indexed() -> list[str]:  # read from the file: a search would catch up first
        rows = sqlite3.connect(path).execute(
            "SELECT a.id FROM archive a WHERE a.rowid IN (SELECT rowid FROM archive_fts "
            "WHERE archive_fts MATCH 'text OR large0 OR large1 OR large2') ORDER BY a.rowid"
        )
        return [row[0] for row in rows]

    assert store.index.index_turn() is True
    assert indexed() == ["ctx-0"]  # the second would take it over the turn's tokens
    assert store.index.index_turn() is True
    assert indexed() == ["ctx-0", "ctx-1"]
    assert store.index.index_turn() is False  # the last large one and every small one
    assert indexed() == [item.id for item in [*large, *small]]
    assert [hit.item.id for hit in store.index.search("r", "large2", 5)] == ["ctx-2"]
    store.close()


def test_the_keyword_index_holds_exactly_the_archive_whatever_leaves_it(tmp_path: Path) -> None:
    """Rows below the mark leave the index with the archive; rows above it (not indexed
    yet) leave nothing behind, and later rows are indexed once."""
    path = tmp_path / "s.db"
    store = Store(path)
    with store.write():
        store.archive.add("r", [note(f"word{n} text", f"ctx-{n}") for n in range(6)], "x", 1)
        assert store.index.index_backlog(4) == 4  # ctx-0..3 indexed, ctx-4 and ctx-5 wait
        assert store.archive.delete_archived("r", ["ctx-1", "ctx-5"]) == 2  # one of each
    assert store.index.index_backlog() == 1  # ctx-4 alone
    with store.write():
        store.archive.add("r", [note("word9 text", "ctx-9")], "x", 2)
        assert store.archive.delete_archived("r", ["ctx-0"]) == 1
    assert store.index.index_backlog() == 1
    assert store.index.index_backlog() == 0
    assert sorted(hit.item.id for hit in store.index.search("r", "text", 10)) == [
        "ctx-2",
        "ctx-3",
        "ctx-4",
        "ctx-9",
    ]
    assert store.retention.archive_state("r").bytes == 4 * len("wordN text")
    store.close()
    _fts_consistent(path)


def test_a_step_4_archive_is_indexed_again_with_the_words_of_its_names(tmp_path: Path) -> None:
    """Rows a step-4 file had indexed are found by the words of their names after the
    upgrade, and forgetting one takes those words out of the index too."""
    path = tmp_path / "step4.db"
    db = _made_by_steps(path, 4)
    db.close()
    db = sqlite3.connect(path, isolation_level=None)  # a row as step 4 archived and indexed it
    db.execute(
        "INSERT INTO archive (root, id, kind, label, content, metadata, timestamp, tokens, "
        "encoding, pinned, archived_at, reason) VALUES ('r', 'ctx-1', 'code', 'dates.js', "
        "'function previousWednesday(d) {}', '{}', 0, 5, 'o200k_base', 0, 1, 'x')"
    )
    db.execute(
        "INSERT INTO archive_fts (rowid, label, content) SELECT rowid, label, content FROM archive"
    )
    db.execute("UPDATE archive_fts_mark SET indexed_up_to = (SELECT max(rowid) FROM archive)")
    db.close()
    store = Store(path)
    assert [hit.item.id for hit in store.index.search("r", "wednesday", 10)] == ["ctx-1"]
    assert [hit.item.id for hit in store.index.search("r", "previousWednesday", 10)] == ["ctx-1"]
    assert store.index.term_counts("r", ["wednesday"]) == {"wednesday": 1}
    with store.write():
        assert store.archive.delete_archived("r", ["ctx-1"]) == 1
    assert store.index.term_counts("r", ["wednesday", "previouswednesday"]) == {
        "wednesday": 0,
        "previouswednesday": 0,
    }
    store.close()
    _fts_consistent(path)
