"""A slice of the relevance set, scored in a few seconds: recall may not fall below what
was measured, hybrid stays at least as good as either mode alone, and questions about
anything but code find nothing in any mode but a rare one (``JUNK``).

The real model (the ``contextls[semantic]`` extra, installed by ``make setup``), the
store's FTS5 search and the real worker, over functions of Python's standard library
(``tests.relevance.score.unit_slice``: 143 documents, 62 questions, 40 off-topic ones).
The whole set, its held-out half and the latency at 100,000 items are the bench's
(``tests/bench/bench_relevance.py``).
"""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.relevance.score import MODES, Bench, Scores, unit_slice

RECALL_AT_3 = {"keyword": 0.71, "semantic": 0.85, "hybrid": 0.86}
"""As measured (0.72, 0.85, 0.87): they may rise, never fall."""
JUNK = 0.025
"""Off-topic questions with a hit, as measured (1 of 40: "what time does the museum open
on Sunday" finds ``calendar.weekday``): the gate refuses fewer paraphrases for it (5 %
of the slice's had no hit at all, now 0 %); the target is at most 5 %."""


@pytest.fixture(scope="module")
def scores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Scores]]:
    directory: Path = tmp_path_factory.mktemp("relevance")
    bench = Bench(directory, unit_slice(), keep=False)
    try:
        yield {mode: bench.score(mode) for mode in MODES}
    finally:
        bench.close()


def test_the_slice_is_what_it_says() -> None:
    archive = unit_slice()
    assert len(archive.documents) >= 120
    assert sum(q.wanted is not None for q in archive.queries) >= 60
    assert sum(q.wanted is None for q in archive.queries) == 40


@pytest.mark.parametrize("mode", MODES)
def test_recall_keeps_its_floor(scores: dict[str, Scores], mode: str) -> None:
    assert round(scores[mode].recall_at_3, 2) >= RECALL_AT_3[mode], scores


def test_hybrid_is_at_least_as_good_as_either_mode(scores: dict[str, Scores]) -> None:
    hybrid = scores["hybrid"]
    assert hybrid.recall_at_3 >= max(scores["keyword"].recall_at_3, scores["semantic"].recall_at_3)
    # Within 0.01 of the best MRR (0.737 against meaning's 0.741 as measured: words lift
    # another item above the first by meaning on one question more than they help).
    assert hybrid.mrr >= max(scores["keyword"].mrr, scores["semantic"].mrr) - 0.01, scores


@pytest.mark.parametrize("mode", MODES)
def test_questions_about_anything_but_code_rarely_find_anything(
    scores: dict[str, Scores], mode: str
) -> None:
    assert scores[mode].junk <= JUNK, scores[mode]
