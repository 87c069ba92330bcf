"""Chunking and hybrid fusion of the semantic extra (pure functions, no model)."""

import pytest

from contextls.search.fusion import fuse
from contextls.semantic.chunks import chunk_ids


def test_short_item_is_one_chunk() -> None:
    assert chunk_ids([1, 2, 3], size=8, overlap=2) == [[1, 2, 3]]


def test_empty_item_still_has_one_chunk() -> None:
    assert chunk_ids([], size=8, overlap=2) == [[]]


def test_long_item_chunks_overlap_and_cover_every_piece() -> None:
    ids = list(range(20))
    chunks = chunk_ids(ids, size=8, overlap=3)
    assert all(len(chunk) <= 8 for chunk in chunks)
    assert chunks[0] == list(range(8))
    assert chunks[1][:3] == chunks[0][-3:]
    assert sorted(set().union(*map(set, chunks))) == ids
    assert chunks[-1][-1] == 19


def test_bad_chunk_sizes_are_refused() -> None:
    with pytest.raises(ValueError):
        chunk_ids([1], size=4, overlap=4)


def test_semantic_order_kept_without_keyword_hits() -> None:
    fused = fuse([], [("a", 0.9), ("b", 0.5)], limit=5)
    assert [hit.id for hit in fused] == ["a", "b"]
    assert fused[0].modes == ("semantic",)


def test_strong_keyword_hit_lifts_an_item_both_found() -> None:
    fused = fuse([("b", 10.0)], [("a", 0.60), ("b", 0.50)], limit=5)
    assert [hit.id for hit in fused] == ["b", "a"]
    assert fused[0].modes == ("semantic", "keyword")


def test_keyword_only_hit_is_kept_and_labelled() -> None:
    fused = fuse([("k", 3.0)], [("a", 0.7), ("b", 0.2)], limit=5)
    ids = [hit.id for hit in fused]
    assert "k" in ids
    assert next(hit for hit in fused if hit.id == "k").modes == ("keyword",)


def test_limit_is_respected() -> None:
    assert len(fuse([("x", 1.0)], [(str(n), n / 10) for n in range(10)], limit=3)) == 3


def test_a_hit_on_a_few_words_of_a_question_does_not_outrank_its_meaning() -> None:
    # "delete a directory and everything inside it": "k" matched only "directory".
    semantic = [("rmtree", 0.55), ("other", 0.30)]
    loose = fuse([("k", 9.0)], semantic, limit=5, coverage={"k": 0.25})
    assert loose[0].id == "rmtree", loose
    # The same keyword hit holding every word of the query (an identifier) wins.
    exact = fuse([("k", 9.0)], semantic, limit=5, coverage={"k": 1.0})
    assert exact[0].id == "k", exact


def test_query_terms_leave_out_stop_words_and_split_identifiers() -> None:
    from contextls.core.items import Item
    from contextls.search.retrieval import query_terms, term_coverage

    assert query_terms("Where do we retry the _backoff_put?") == {"retry", "backoff", "put"}
    item = Item("ctx-1", "code", "def _backoff_put(url):\n    retry()\n", {}, 0, 5)
    assert term_coverage({"retry", "backoff", "upload"}, item) == 2 / 3
    assert term_coverage(set(), item) == 1.0
