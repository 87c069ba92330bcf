"""The long-run finder the token counts split at finds every maximal run of one
character of ``LONG_RUN`` or more, in order (the reference: a plain walk of the text)."""

from __future__ import annotations

from itertools import groupby

from hypothesis import given, settings
from hypothesis import strategies as st

from contextls.app.tokenizers import LONG_RUN, long_runs

WINDOW = LONG_RUN // 2
LENGTHS = st.one_of(
    st.integers(0, 40),
    st.sampled_from([WINDOW - 1, WINDOW, WINDOW + 1, LONG_RUN - 1, LONG_RUN, LONG_RUN + 1]),
    st.integers(LONG_RUN - 3, LONG_RUN + 3),
    st.integers(2 * LONG_RUN - 2, 2 * LONG_RUN + 2),
    st.integers(0, 3 * LONG_RUN),
)


def walked(text: str) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    at = 0
    for _, group in groupby(text):
        length = sum(1 for _ in group)
        if length >= LONG_RUN:
            runs.append((at, at + length))
        at += length
    return runs


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(" \n\tab=é"), LENGTHS), max_size=8))
def test_the_runs_are_the_walks(pieces: list[tuple[str, int]]) -> None:
    text = "".join(char * length for char, length in pieces)
    assert long_runs(text) == walked(text)


def test_a_run_just_short_of_the_length_is_not_one() -> None:
    text = "é" * (LONG_RUN - 1) + " " + "é" * LONG_RUN
    assert long_runs(text) == [(LONG_RUN, 2 * LONG_RUN)]
