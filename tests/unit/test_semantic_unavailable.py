"""Without the extra (simulated: a required package is missing) search stays keyword-only."""

from pathlib import Path

import pytest

from contextls.core.items import Item
from contextls.search.retrieval import retrieve
from contextls.semantic import availability
from contextls.semantic.engine import Engine
from contextls.storage.store import Store


def test_missing_package_means_keyword_search_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(availability, "_REQUIRED", ("numpy", "no_such_package_for_contextls"))
    store = Store(tmp_path / "s.db")
    item = Item(
        id="ctx-1", kind="text", content="retry uploads", metadata={}, timestamp=1, tokens=2
    )
    with store.write():
        store.archive.add("r", [item], "evicted", 0)
    engine = Engine(store.location)
    assert not engine.available
    assert "no_such_package_for_contextls" in engine.reason
    assert engine.status("r", 0)["available"] is False
    assert engine.index_some() is False
    found = retrieve(store, engine, "r", "uploads", 5, None, None)
    assert found.mode == "keyword" and found.warning is None
    assert [hit.item.id for hit in found.hits] == ["ctx-1"]
    asked = retrieve(store, engine, "r", "uploads", 5, None, "semantic")
    assert asked.mode == "keyword"
    assert asked.warning and "contextls[semantic]" in asked.warning
    store.close()
