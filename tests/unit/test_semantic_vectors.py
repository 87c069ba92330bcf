"""The vector side table: claims, persistence, model ids, best-chunk top-k."""

import sqlite3

import pytest

np = pytest.importorskip("numpy")

from contextls.semantic import vectors  # noqa: E402
from contextls.store import Store  # noqa: E402


def _db(path: str) -> sqlite3.Connection:
    Store(path).close()  # the real schema: archive and items tables
    db = sqlite3.connect(path, isolation_level=None)
    vectors.create(db)
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


def test_claims_keep_two_owners_apart_until_the_lease_ends(tmp_path) -> None:
    first = _db(str(tmp_path / "s.db"))
    second = sqlite3.connect(str(tmp_path / "s.db"), isolation_level=None)
    for n in range(3):
        _archive(first, "r", f"ctx-{n}", f"text {n}")
    first.execute("BEGIN IMMEDIATE")
    mine = vectors.claim(first, "m1", "one", now_ms=1000, limit=2)
    first.execute("COMMIT")
    second.execute("BEGIN IMMEDIATE")
    theirs = vectors.claim(second, "m1", "two", now_ms=1001, limit=10)
    second.execute("COMMIT")
    assert len(mine) == 2
    assert {p.id for p in theirs} == {"ctx-0", "ctx-1", "ctx-2"} - {p.id for p in mine}
    # A dead owner's lease runs out and the item is claimed again.
    later = vectors.claim(second, "m1", "two", now_ms=1000 + vectors.LEASE_MS + 1, limit=10)
    assert {p.id for p in later} == {"ctx-0", "ctx-1", "ctx-2"}


def test_vectors_persist_and_a_new_model_id_makes_items_pending(tmp_path) -> None:
    path = str(tmp_path / "s.db")
    db = _db(path)
    _archive(db, "r", "ctx-1", "hello")
    assert vectors.pending_count(db, "m1") == 1
    vectors.store(db, "r", "ctx-1", "m1", np.stack([_unit(1.0)]))
    db.close()
    reopened = _db(path)
    assert vectors.pending_count(reopened, "m1") == 0
    assert vectors.indexed_count(reopened, "m1") == 1
    assert vectors.pending_count(reopened, "m2") == 1


def test_an_item_scores_as_its_best_chunk(tmp_path) -> None:
    db = _db(str(tmp_path / "s.db"))
    vectors.store(db, "r", "long", "m1", np.stack([_unit(0.0, 1.0), _unit(1.0, 0.1)]))
    vectors.store(db, "r", "short", "m1", np.stack([_unit(1.0, 0.5)]))
    vectors.store(db, "other-root", "x", "m1", np.stack([_unit(1.0)]))
    index = vectors.VectorIndex("r", "m1")
    index.refresh(db)
    top = index.top(_unit(1.0), limit=5)
    assert [item_id for item_id, _ in top] == ["long", "short"]
    assert top[0][1] == pytest.approx(float(_unit(1.0, 0.1)[0]), rel=1e-5)


def test_index_refresh_sees_new_and_replaced_vectors(tmp_path) -> None:
    db = _db(str(tmp_path / "s.db"))
    vectors.store(db, "r", "a", "m1", np.stack([_unit(1.0)]))
    index = vectors.VectorIndex("r", "m1")
    index.refresh(db)
    vectors.store(db, "r", "b", "m1", np.stack([_unit(0.0, 1.0)]))
    index.refresh(db)
    assert len(index) == 2
    vectors.store(db, "r", "a", "m1", np.stack([_unit(0.0, 0.0, 1.0)]))
    index.refresh(db)
    assert len(index) == 2
    assert index.top(_unit(0.0, 0.0, 1.0), limit=1)[0][0] == "a"
