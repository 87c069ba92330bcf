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
    fused = fuse([], [("a", 0.9), ("b", 0.5)], {"a": 0.9, "b": 0.5}, {})
    assert [hit.id for hit in fused] == ["a", "b"]


def test_an_item_holding_the_query_words_is_lifted_over_a_closer_meaning() -> None:
    cosines = {"a": 0.60, "b": 0.50}
    fused = fuse([("b", 10.0)], [("a", 0.60), ("b", 0.50)], cosines, {"b": 1.0})
    assert [hit.id for hit in fused] == ["b", "a"]


def test_a_keyword_hit_without_a_vector_ranks_as_the_lowest_cosine_seen() -> None:
    cosines = {"a": 0.7, "b": 0.2}
    fused = fuse([("k", 3.0)], [("a", 0.7), ("b", 0.2)], cosines, {"k": 0.0})
    assert [hit.id for hit in fused] == ["a", "b", "k"]
    assert fused[-1].score == pytest.approx(0.2)


def test_a_hit_on_a_few_words_of_a_question_does_not_outrank_its_meaning() -> None:
    # "delete a directory and everything inside it": "k" holds only "directory".
    semantic = [("rmtree", 0.55), ("other", 0.30)]
    cosines = {"rmtree": 0.55, "other": 0.30, "k": 0.25}
    loose = fuse([("k", 9.0)], semantic, cosines, {"k": 0.25})
    assert loose[0].id == "rmtree", loose
    # The same keyword hit holding every word of the query (an identifier) wins.
    exact = fuse([("k", 9.0)], semantic, cosines, {"k": 1.0})
    assert exact[0].id == "k", exact
