"""The model (~0.3 s to load) is never loaded to say whether search by meaning is there,
and the idle turn loads it on the worker's thread, not on the event loop's.

Real model, real store file; ``ProcessEmbedder`` is wrapped to see where it is built.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")

from contextls.core.items import Item
from contextls.semantic import engine as engine_module
from contextls.semantic.engine import Engine
from contextls.storage.store import Store

ROOT = "file:///ws"


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads the model was built on."""
    names: list[str] = []
    real = engine_module.ProcessEmbedder

    def recording(*args: Any) -> Any:
        names.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(engine_module, "ProcessEmbedder", recording)
    return names


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    """An engine on a store whose archive holds one note, the model not loaded."""
    store = Store(tmp_path / "s.db")
    note = Item("ctx-1", "text", "retry the upload with backoff", {}, 0, 6, encoding="o200k_base")
    with store.write():
        store.archive.add(ROOT, [note], "maxItems", 0)
    engine = Engine(store.location)
    yield engine
    engine.stop()
    store.close()


def test_availability_and_status_are_told_without_the_model(
    engine: Engine, built: list[str]
) -> None:
    found = engine.availability()
    assert found["available"] is True and found["model"] and found["reason"] == ""
    assert engine.status(ROOT, 1)["pending"] == 1
    assert built == []


def test_the_idle_turn_loads_the_model_on_the_worker_and_then_embeds(
    engine: Engine, built: list[str]
) -> None:
    assert engine.index_some() is None  # loading, on the worker's thread
    engine.wait()
    assert built == ["contextls-embed"]
    while engine.index_some() is not False:
        engine.wait()
    assert engine.status(ROOT, 1)["indexed"] == 1


def test_a_search_while_the_worker_loads_waits_for_that_model(
    engine: Engine, built: list[str]
) -> None:
    assert engine.index_some() is None
    found = engine.search(ROOT, "retry with backoff", 5)  # the model the worker is loading
    engine.wait()
    assert len(built) == 1
    assert [item_id for item_id, _ in found] in ([], ["ctx-1"])  # embedded yet or not
    assert engine.catch_up(ROOT, 1) == 0
    assert [item_id for item_id, _ in engine.search(ROOT, "retry with backoff", 5)] == ["ctx-1"]


def test_a_query_embedded_ahead_is_searched_without_the_model(engine: Engine) -> None:
    """A search embeds its query in a thread first (the model's process may be busy with
    the backlog, and the search on the event loop would wait for it): the search then
    finds the vector kept, and the same items as a query it embeds itself."""
    while engine.index_some() is not False:
        engine.wait()
    query = "retry with backoff"
    assert engine.embeds_query(query)
    engine.embed_query(query)
    assert not engine.embeds_query(query) and engine.embeds_query("another question")
    embedder = engine._embedder
    assert embedder is not None
    calls: list[list[str]] = []
    real = embedder.embed

    def counting(texts: list[str]) -> Any:
        calls.append(texts)
        return real(texts)

    embedder.embed = counting  # type: ignore[method-assign]
    ahead = engine.nearest(ROOT, query, 5)
    assert calls == []
    engine.queries = type(engine.queries)()  # nothing kept: the search embeds it
    itself = engine.nearest(ROOT, query, 5)
    assert calls == [[query]]
    assert ahead.hits == itself.hits and [item_id for item_id, _ in ahead.hits] == ["ctx-1"]
