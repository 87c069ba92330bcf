"""Window items are embedded before they are evicted; an eviction copies their vectors.

Real model (the ``contextls[semantic]`` extra), real store file, the indexer's
own functions with a clock passed in, so "settled" needs no sleeping.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")

from contextls.core.items import Item  # noqa: E402
from contextls.search.retrieval import relevant_history, retrieve  # noqa: E402
from contextls.semantic import (  # noqa: E402
    backlog,
    indexer,
    tables,
    vector_index,
    vectors,
    window_queue,
)
from contextls.semantic.engine import CATCH_UP_ITEMS, Engine  # noqa: E402
from contextls.semantic.model import Embedder  # noqa: E402
from contextls.storage.store import Store  # noqa: E402
from contextls.storage.windows import WorkspaceRow  # noqa: E402

ROOT = "file:///ws"
SOURCE = "def _backoff_put(url, body):\n    for attempt in range(5):\n        sleep(2 ** attempt)\n"


class CountingEmbedder:
    """The real embedder, counting the chunks it embeds."""

    def __init__(self, real: Embedder) -> None:
        self.real = real
        self.model_id = real.model_id
        self.chunks = 0

    def pieces(self, text: str) -> list[int]:
        return self.real.pieces(text)

    def embed_ids(self, id_lists: list[list[int]]) -> np.ndarray:
        self.chunks += len(id_lists)
        return self.real.embed_ids(id_lists)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def _item(item_id: str, content: str, seq: int = 1) -> Item:
    return Item(item_id, "code", content, {}, 0, 10, seq=seq, encoding="o200k_base")


def _open(path: Path, embedder: Embedder) -> tuple[Store, sqlite3.Connection]:
    store = Store(path)
    db = sqlite3.connect(path, isolation_level=None)
    tables.install(db, embedder.model_id)
    return store, db


def _settled() -> int:
    return indexer.now_ms() + vectors.WINDOW_SETTLE_MS + 1


def _write_window(store: Store, items: list[Item], revision: int) -> None:
    """Items written as a change does: with the window's revision moved on."""
    with store.write():
        store.windows.save_items(ROOT, items)
        store.windows.save_workspace(ROOT, WorkspaceRow(2, 4, revision, 0))


def _evict(store: Store, item: Item) -> None:
    with store.write():
        store.windows.delete_items(ROOT, [item.id])
        store.archive.add(ROOT, [item], "maxItems", 0)


def _embedded_in_window(tmp_path: Path, embedder: Embedder) -> tuple[Store, sqlite3.Connection]:
    """A store whose window holds ctx-1 (SOURCE), embedded in the window."""
    store, db = _open(tmp_path / "s.db", embedder)
    _write_window(store, [_item("ctx-1", SOURCE)], revision=1)
    indexer.look_at_windows(db, {})
    indexer.index_window(db, embedder, clock=_settled)
    return store, db


def test_a_window_item_waits_until_its_text_settles(tmp_path: Path, embedder: Embedder) -> None:
    store, db = _open(tmp_path / "s.db", embedder)
    _write_window(store, [_item("ctx-1", SOURCE)], revision=1)
    assert not vectors.has_work(db, _settled())  # not looked at yet: its wait has not begun
    assert indexer.index_window(db, embedder, clock=_settled) == 0
    seen = indexer.look_at_windows(db, {})
    assert seen == {ROOT: 1}
    assert window_queue.window_waits(db)
    assert not vectors.has_work(db, indexer.now_ms())
    assert indexer.index_window(db, embedder, clock=indexer.now_ms) == 0
    assert vectors.has_work(db, _settled())
    assert indexer.index_window(db, embedder, clock=_settled) == 1
    assert db.execute("SELECT count(*) FROM semantic_window").fetchone()[0] == 1
    assert not window_queue.window_waits(db)


def test_an_evicted_item_takes_its_window_vectors_without_embedding(
    tmp_path: Path, embedder: Embedder
) -> None:
    store, db = _embedded_in_window(tmp_path, embedder)
    (made,) = db.execute("SELECT vector FROM semantic_window").fetchone()
    _evict(store, _item("ctx-1", SOURCE))
    counting = CountingEmbedder(embedder)
    assert indexer.index_some(db, counting) == 1  # type: ignore[arg-type]
    assert counting.chunks == 0
    (stored,) = db.execute("SELECT vector FROM semantic_vectors WHERE id = 'ctx-1'").fetchone()
    assert stored == made
    assert db.execute("SELECT count(*) FROM semantic_window").fetchone()[0] == 0


def test_text_changed_after_embedding_is_embedded_again_at_eviction(
    tmp_path: Path, embedder: Embedder
) -> None:
    store, db = _embedded_in_window(tmp_path, embedder)
    changed = _item("ctx-1", SOURCE + "    raise UploadFailed(url)\n", seq=2)
    _evict(store, changed)  # evicted before the new text settled
    counting = CountingEmbedder(embedder)
    assert indexer.index_some(db, counting) == 1  # type: ignore[arg-type]
    assert counting.chunks == 1
    (stored,) = db.execute("SELECT vector FROM semantic_vectors WHERE id = 'ctx-1'").fetchone()
    expected = vector_index.pack(embedder.embed_ids([embedder.pieces(changed.content)]))[0]
    assert stored == expected


def test_rewriting_an_item_without_changing_its_text_embeds_nothing(
    tmp_path: Path, embedder: Embedder
) -> None:
    store, db = _embedded_in_window(tmp_path, embedder)
    # Pinned: the row is written again, with the same text.
    _write_window(store, [_item("ctx-1", SOURCE, seq=3)], revision=2)
    indexer.look_at_windows(db, {ROOT: 1})
    assert not window_queue.window_waits(db)
    counting = CountingEmbedder(embedder)
    assert indexer.index_window(db, counting, clock=_settled) == 0  # type: ignore[arg-type]
    assert counting.chunks == 0


def test_text_changed_in_the_window_waits_again_and_is_embedded_again(
    tmp_path: Path, embedder: Embedder
) -> None:
    store, db = _embedded_in_window(tmp_path, embedder)
    changed = _item("ctx-1", SOURCE + "    raise UploadFailed(url)\n", seq=2)
    _write_window(store, [changed], revision=2)
    assert indexer.look_at_windows(db, {ROOT: 2}) == {ROOT: 2}  # its revision did not move
    assert not window_queue.window_waits(db)
    indexer.look_at_windows(db, {ROOT: 1})
    assert window_queue.window_waits(db)
    counting = CountingEmbedder(embedder)
    assert indexer.index_window(db, counting, clock=_settled) == 1  # type: ignore[arg-type]
    assert counting.chunks == 1
    made_from = vectors.digest(changed.content)
    assert db.execute("SELECT digest FROM semantic_window").fetchall() == [(made_from,)]


def test_a_forget_takes_the_vectors_of_what_it_forgot_before_its_scrub(
    tmp_path: Path, embedder: Embedder
) -> None:
    store, db = _open(tmp_path / "s.db", embedder)
    item = _item("ctx-1", SOURCE)
    _evict(store, item)
    indexer.index_some(db, embedder)
    assert vectors.indexed_count(db, ROOT) == 1
    with store.write():
        store.archive.forget(ROOT, ["ctx-1"])
    assert vectors.swept_behind(db)
    # A process whose model never loaded (the engine opens its own connection).
    Engine(str(tmp_path / "s.db")).forgotten()
    assert db.execute("SELECT count(*) FROM semantic_vectors").fetchone()[0] == 0
    assert db.execute("SELECT id FROM semantic_gone").fetchall() == [("ctx-1",)]
    assert not vectors.swept_behind(db)


class ForgettingEmbedder(CountingEmbedder):
    """The real embedder; while it embeds, ``forget`` runs (another request's forget)."""

    def __init__(self, real: Embedder, forget: Callable[[], None]) -> None:
        super().__init__(real)
        self.forget = forget

    def embed_ids(self, id_lists: list[list[int]]) -> np.ndarray:
        self.forget()
        return super().embed_ids(id_lists)


def test_an_item_forgotten_while_it_is_embedded_gets_no_vectors(
    tmp_path: Path, embedder: Embedder
) -> None:
    store, db = _open(tmp_path / "s.db", embedder)
    _evict(store, _item("ctx-1", SOURCE))
    engine = Engine(str(tmp_path / "s.db"))

    def forget() -> None:
        with store.write():
            store.archive.forget(ROOT, ["ctx-1"])
        engine.forgotten()  # the scrub's first step, before the vectors are stored

    indexer.index_some(db, ForgettingEmbedder(embedder, forget))  # type: ignore[arg-type]
    assert db.execute("SELECT count(*) FROM semantic_vectors").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM semantic_claims").fetchone()[0] == 0


def test_a_forget_does_not_wait_for_the_item_being_embedded(
    tmp_path: Path, embedder: Embedder
) -> None:
    store, _db = _open(tmp_path / "s.db", embedder)
    _evict(store, _item("ctx-1", SOURCE))
    engine = Engine(str(tmp_path / "s.db"))
    embedding, done = threading.Event(), threading.Event()

    def worker() -> None:  # holds the worker's lock as while it embeds an item
        with engine._write_lock:
            embedding.set()
            done.wait()

    holder = threading.Thread(target=worker)
    holder.start()
    embedding.wait()
    with store.write():
        store.archive.forget(ROOT, ["ctx-1"])
    forgetting = threading.Thread(target=engine.forgotten)
    forgetting.start()
    forgetting.join(timeout=60)  # a bound on a hang, not on speed
    finished_first = not forgetting.is_alive()
    done.set()
    holder.join()
    forgetting.join()
    assert finished_first, "the forget waited for the item being embedded"


def test_an_item_restored_from_the_archive_has_its_vectors_swept(
    tmp_path: Path, embedder: Embedder
) -> None:
    store, db = _open(tmp_path / "s.db", embedder)
    _evict(store, _item("ctx-1", SOURCE))
    _evict(store, _item("ctx-2", "a note about the upload retry policy"))
    indexer.index_some(db, embedder)
    assert not vectors.swept_behind(db)
    with store.write():
        store.archive.delete_archived(ROOT, ["ctx-1"])
    assert vectors.swept_behind(db)
    # Until the sweep, status counts what is embedded instead of trusting the counter.
    engine = Engine(str(tmp_path / "s.db"))
    assert engine.status(ROOT, archived=1)["indexed"] == 1
    db.execute("BEGIN IMMEDIATE")
    assert vectors.sweep(db, 0)[1] == 1
    db.execute("COMMIT")
    assert vectors.indexed_count(db, ROOT) == 1
    assert not vectors.swept_behind(db)


def test_an_add_writes_nothing_of_the_extra(tmp_path: Path, embedder: Embedder) -> None:
    """No trigger of the extra on the core's tables: an add and an eviction pay nothing
    for search by meaning, and the worker finds both by looking."""
    store, db = _open(tmp_path / "s.db", embedder)
    triggers = {
        name
        for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN "
            "('archive', 'items', 'workspaces', 'aliases', 'archive_state')"
        )
    }
    assert triggers and not {name for name in triggers if name.startswith("semantic")}
    _write_window(store, [_item("ctx-1", SOURCE)], revision=1)
    _evict(store, _item("ctx-1", SOURCE))
    written = [
        name
        for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'semantic%' "
            "AND name != 'semantic_meta'"
        )
        if db.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
    ]
    assert written == []
    assert vectors.archive_work(db, indexer.now_ms())  # found above the mark


def test_a_search_leaves_a_big_backlog_to_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.db"
    store = Store(path)
    engine = Engine(str(path))
    assert engine.available, engine.reason
    items = [_item(f"ctx-{n}", f"def f{n}(x):\n    return x + {n}\n") for n in range(40)]
    _evict(store, items[0])
    assert engine.catch_up(ROOT, 1) == 0  # a small backlog: embedded before the search
    for item in items[1 : CATCH_UP_ITEMS + 5]:
        _evict(store, item)
    embedded_during_search: list[int] = []
    real_index_some = indexer.index_some

    def index_some(*args: object, **kwargs: object) -> int:
        done = real_index_some(*args, **kwargs)  # type: ignore[arg-type]
        embedded_during_search.append(done)
        return done

    monkeypatch.setattr(indexer, "index_some", index_some)
    waiting = engine.catch_up(ROOT, CATCH_UP_ITEMS + 5)
    assert waiting == CATCH_UP_ITEMS + 4
    assert embedded_during_search == []  # the search embedded nothing: the worker will
    monkeypatch.setattr(indexer, "index_some", real_index_some)
    # Search and render's history both say what they could not look at.
    with store.write():
        store.index.index_backlog()
    found = retrieve(store, engine, ROOT, "return x", 5, None, "hybrid")
    history = relevant_history(store, engine, ROOT, "return x", None, auto_retrieve=True)
    expected = f"{CATCH_UP_ITEMS + 4} archived items not embedded yet"
    assert found.warning and found.warning.startswith(expected), found.warning
    assert history.warning == found.warning
    engine.stop()
    store.close()


def test_an_item_being_embedded_still_waits_in_the_status(
    tmp_path: Path, embedder: Embedder
) -> None:
    """Taken off the queue, it has no vectors until they are stored: ``status`` must not
    say the window has nothing left to embed meanwhile (a client waiting for the backlog
    to empty would go on while it is being embedded)."""
    store, db = _open(tmp_path / "s.db", embedder)
    _write_window(store, [_item("ctx-1", SOURCE), _item("ctx-2", SOURCE + "# two\n")], 1)
    seen = indexer.look_at_windows(db, {})
    status = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    held = backlog.Held()

    def waiting() -> int:
        counts = backlog.counts(status, ROOT, 0, seen[ROOT], held.of(ROOT))
        return int(counts["windowPending"])

    class Watching(CountingEmbedder):
        def embed_ids(self, id_lists: list[list[int]]) -> np.ndarray:
            self.seen_waiting = waiting()
            return super().embed_ids(id_lists)

    watching = Watching(embedder)
    assert waiting() == 2
    assert indexer.index_window(db, watching, clock=_settled, holding=held.hold) == 2  # type: ignore[arg-type]
    assert watching.seen_waiting == 2
    assert waiting() == 0 and held.of(ROOT) == []


def test_the_status_counts_are_counted_again_only_when_the_file_changed(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _ = _open(tmp_path / "s.db", embedder)
    _write_window(store, [_item(f"ctx-{n}", f"{SOURCE}# {n}\n") for n in range(30)], 1)
    status = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    counted: list[str] = []
    without_vectors = window_queue.without_vectors
    monkeypatch.setattr(
        window_queue,
        "without_vectors",
        lambda db, root: counted.append(root) or without_vectors(db, root),
    )
    remembered = backlog.Remembered()
    first = remembered.counts(status, ROOT, 0, None, ())
    again = remembered.counts(status, ROOT, 0, None, ())
    assert first == again and first["windowPending"] == 30 and len(counted) == 1
    _write_window(store, [_item("ctx-30", SOURCE)], 2)  # another connection commits
    assert remembered.counts(status, ROOT, 0, None, ())["windowPending"] == 31
    assert remembered.counts(status, ROOT, 0, None, ["ctx-0"])["windowPending"] == 31
    assert len(counted) == 3  # after the commit, and for what the worker holds
