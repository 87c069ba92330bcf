"""The vector side table: queue and claims, persistence, model ids, sweeping, the int8 index."""

import sqlite3

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")

from contextls.semantic import tables, vector_index, vectors  # noqa: E402
from contextls.semantic.scan import Scanner, quantize_rows  # noqa: E402
from contextls.storage import migrations  # noqa: E402
from contextls.storage.store import Store  # noqa: E402


def _db(path: str, model: str = "m1") -> sqlite3.Connection:
    Store(path).close()  # the real schema: archive and items tables
    db = sqlite3.connect(path, isolation_level=None)
    tables.install(db, model)
    return db


def _archive(db: sqlite3.Connection, root: str, item_id: str, content: str) -> None:
    db.execute(
        "INSERT INTO archive (root, id, kind, label, content, metadata, timestamp, tokens,"
        " encoding, pinned, archived_at, reason) VALUES (?, ?, 'text', '', ?, '{}', 0, 1,"
        " 'o200k_base', 0, 0, 'evicted')",
        (root, item_id, content),
    )


def _unit(*values: float) -> "np.ndarray":
    vector = np.zeros(384, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


def _store(db: sqlite3.Connection, root: str, item_id: str, *rows: "np.ndarray") -> None:
    _archive(db, root, item_id, item_id)
    db.execute("BEGIN IMMEDIATE")
    (item,) = [p for p in vectors.claim(db, "t", 0, 1000) if p.id == item_id] or [
        vectors.Pending(0, root, item_id, item_id)
    ]
    vectors.store(db, item, "m1", vector_index.pack(np.stack(rows)))
    db.execute("COMMIT")


def test_claims_keep_two_owners_apart_until_the_lease_ends(tmp_path) -> None:
    first = _db(str(tmp_path / "s.db"))
    second = sqlite3.connect(str(tmp_path / "s.db"), isolation_level=None)
    for n in range(3):
        _archive(first, "r", f"ctx-{n}", f"text {n}")
    first.execute("BEGIN IMMEDIATE")
    mine = vectors.claim(first, "one", now_ms=1000, limit=2)
    first.execute("COMMIT")
    second.execute("BEGIN IMMEDIATE")
    theirs = vectors.claim(second, "two", now_ms=1001, limit=10)
    second.execute("COMMIT")
    assert len(mine) == 2
    assert {p.id for p in theirs} == {"ctx-0", "ctx-1", "ctx-2"} - {p.id for p in mine}
    assert vectors.pending_count(first, "r") == 3  # claimed is still pending
    # A dead owner's lease runs out and the items are claimed again.
    later = vectors.claim(second, "two", now_ms=1001 + vectors.LEASE_MS, limit=10)
    assert {p.id for p in later} == {"ctx-0", "ctx-1", "ctx-2"}


def test_a_row_archived_while_nobody_looked_is_found_above_the_mark(tmp_path) -> None:
    """Rows written by a process without the extra (no queue, no trigger) are queued at
    the next look, once each; a restored newest row does not hide the next one."""
    db = _db(str(tmp_path / "s.db"))
    _archive(db, "r", "ctx-1", "first")
    assert vectors.archive_work(db, 0)
    db.execute("BEGIN IMMEDIATE")
    assert [p.id for p in vectors.claim(db, "one", 0, 10)] == ["ctx-1"]
    db.execute("COMMIT")
    db.execute("DELETE FROM archive WHERE id = 'ctx-1'")  # restored: the newest row
    _archive(db, "r", "ctx-2", "second")
    assert vectors.archive_work(db, 0)
    db.execute("BEGIN IMMEDIATE")
    assert [p.id for p in vectors.claim(db, "one", 0, 10)] == ["ctx-2"]
    assert vectors.queue_archived(db) == 0
    db.execute("COMMIT")


def test_the_queue_survives_reopening_and_a_new_model_requeues_everything(tmp_path) -> None:
    path = str(tmp_path / "s.db")
    db = _db(path)
    _store(db, "r", "ctx-1", _unit(1.0))
    _archive(db, "r", "ctx-2", "later")
    db.close()
    reopened = _db(path)
    assert vectors.pending_count(reopened, "r") == 1
    assert vectors.indexed_count(reopened, "r") == 1
    reopened.close()
    other = _db(path, model="m2")
    assert vectors.pending_count(other, "r") == 2
    assert vectors.indexed_count(other, "r") == 0


def test_an_item_scores_as_its_best_chunk(tmp_path) -> None:
    db = _db(str(tmp_path / "s.db"))
    _store(db, "r", "long", _unit(0.0, 1.0), _unit(1.0, 0.1))
    _store(db, "r", "short", _unit(1.0, 0.5))
    _store(db, "other-root", "x", _unit(1.0))
    index = vector_index.VectorIndex("r", "m1")
    index.refresh(db)
    top = index.search(Scanner(384), _unit(1.0), limit=5)
    assert [item_id for item_id, _ in top] == ["long", "short"]
    assert top[0][1] == pytest.approx(float(_unit(1.0, 0.1)[0]), abs=0.01)


def test_index_refresh_sees_new_replaced_and_swept_vectors(tmp_path) -> None:
    db = _db(str(tmp_path / "s.db"))
    scanner = Scanner(384)
    _store(db, "r", "a", _unit(1.0))
    index = vector_index.VectorIndex("r", "m1")
    index.refresh(db)
    _store(db, "r", "b", _unit(0.0, 1.0))
    index.refresh(db)
    assert index.items == 2
    # "a" archived again with other text: its old rows go, the new one counts.
    _store(db, "r", "a", _unit(0.0, 0.0, 1.0))
    index.refresh(db)
    assert index.items == 2
    assert index.search(scanner, _unit(0.0, 0.0, 1.0), limit=1)[0][0] == "a"
    assert index.search(scanner, _unit(1.0), limit=3)[0][1] < 0.5  # the old "a" scores 0
    # "b" leaves the archive (restored, forgotten): its vectors are swept.
    db.execute("DELETE FROM archive WHERE id = 'b'")
    assert vectors.drop_unarchived(db) == 1
    index.refresh(db)
    assert index.items == 1
    assert [i for i, _ in index.search(scanner, _unit(0.0, 1.0), limit=3)] == ["a"]
    assert db.execute("SELECT count(*) FROM semantic_vectors WHERE id = 'b'").fetchone()[0] == 0


def test_int8_scan_ranks_like_float32() -> None:
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((5000, 384)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    query = rows[17] + 0.5 * rows[42]
    query /= np.linalg.norm(query)
    quantized, unscale = quantize_rows(rows)
    approx = Scanner(384).scores(quantized, unscale, query)
    exact = rows @ query
    assert np.abs(approx - exact).max() < 0.01
    assert list(np.argsort(-approx)[:2]) == list(np.argsort(-exact)[:2]) == [17, 42]


def test_packed_rows_keep_the_cosine() -> None:
    rng = np.random.default_rng(5)
    rows = rng.standard_normal((50, 384)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    quantized, factors = vector_index.unpack(vector_index.pack(rows))
    approx = Scanner(384).scores(quantized, factors, rows[7])
    assert np.abs(approx - rows @ rows[7]).max() < 0.01


def test_items_with_vectors_are_counted_by_triggers_on_the_vector_table(tmp_path) -> None:
    path = str(tmp_path / "s.db")
    db = _db(path)
    _store(db, "r", "a", _unit(1.0), _unit(0.0, 1.0))  # two chunks: one item
    _store(db, "r", "b", _unit(1.0))
    _store(db, "q", "c", _unit(1.0))
    assert (vectors.indexed_count(db, "r"), vectors.indexed_count(db, "q")) == (2, 1)
    db.execute("DELETE FROM archive WHERE id = 'a'")  # swept: its vectors go, and its count
    assert vectors.swept_behind(db)
    vectors.drop_unarchived(db)
    assert vectors.indexed_count(db, "r") == 1
    db.close()
    db = _db(path)  # opened again: the counts are kept, not made again
    assert (vectors.indexed_count(db, "r"), vectors.indexed_count(db, "q")) == (1, 1)
    assert vectors.indexed_count(db, "nowhere") == 0


def test_a_file_of_the_first_step_loses_the_triggers_and_keeps_what_waits(tmp_path) -> None:
    """``semantic.2`` on a file made with ``semantic.1``: the triggers on the core's
    tables go, and every archived row without vectors is queued, whoever archived it."""
    path = str(tmp_path / "s.db")
    Store(path).close()
    db = sqlite3.connect(path, isolation_level=None)
    first = tables.SEMANTIC.steps[0]
    for statement in migrations.statements(first.script):
        db.execute(statement)
    db.execute("INSERT INTO migrations VALUES (?, 0)", (first.name,))
    db.execute("INSERT INTO semantic_meta VALUES ('model', 'm1')")
    _archive(db, "r", "ctx-1", "queued by the trigger")
    _archive(db, "r", "ctx-2", "archived while the queue was lost")
    assert db.execute("SELECT count(*) FROM semantic_queue").fetchone()[0] == 2
    db.execute("DELETE FROM semantic_queue WHERE rowid = (SELECT max(rowid) FROM archive)")
    tables.install(db, "m1")
    triggers = {
        row[0]
        for row in db.execute(
            "SELECT tbl_name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'semantic%'"
        )
    }
    assert triggers == {"semantic_vectors"}
    assert vectors.pending_count(db, "r") == 2
    db.execute("BEGIN IMMEDIATE")
    assert sorted(p.id for p in vectors.claim(db, "one", 0, 10)) == ["ctx-1", "ctx-2"]
    db.execute("COMMIT")
