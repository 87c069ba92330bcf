"""Long runs of one character are counted by their period, exactly as the reference.

tiktoken panics on a whitespace run of ~1,000,000 characters (a ``BaseException``), so
a run longer than ``LONG_RUN`` is counted as ``KEPT_RUN`` characters plus whole
periods. Each figure here is the split count against tiktoken's own count of the same
text, on the split points (just past ``LONG_RUN``, periods later, in the middle of
code), for every tiktoken-based encoding installed; the wider sweep is in
tests/bench/bench_tokenizers.py.
"""

from __future__ import annotations

import pytest

from contextls.app.tokenizers import (
    KEPT_RUN,
    LONG_RUN,
    PERIOD,
    Tiktoken,
    UncountableText,
    available,
    load_counter,
)

ENCODINGS = [e for e in ("o200k_base", "cl100k_base", "qwen3.5", "llama3") if not available(e)]
CHARS = [" ", "\n", "\t", "a", "7", "=", "é"]
LENGTHS = [LONG_RUN + 1, LONG_RUN + 3 * PERIOD + 5]


def counter(encoding: str) -> Tiktoken:
    loaded = load_counter(encoding)
    assert isinstance(loaded, Tiktoken)
    return loaded


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("char", CHARS)
def test_a_long_run_counts_as_the_reference_counts_it(encoding: str, char: str) -> None:
    tokens = counter(encoding)
    for length in LENGTHS:
        text = f"def f(x):\n    return x{char * length}word = 1\n"
        assert tokens.count(text) == len(tokens.bpe.encode_ordinary(text)), (char, length)


@pytest.mark.parametrize("encoding", ENCODINGS[:1])
def test_two_runs_and_text_between_them(encoding: str) -> None:
    tokens = counter(encoding)
    text = "a" * (LONG_RUN + 17) + " middle " + " " * (LONG_RUN + PERIOD + 1) + "end"
    assert tokens.count(text) == len(tokens.bpe.encode_ordinary(text))


def test_a_million_spaces_are_counted_not_a_panic() -> None:
    tokens = counter("o200k_base")
    assert tokens.count(" " * 1_000_000) == 7_813  # one token per 128 spaces
    assert KEPT_RUN + PERIOD < LONG_RUN  # what the library sees stays under the limit


def test_a_panic_of_the_library_is_a_refusal() -> None:
    tokens = counter("o200k_base")

    class Panicking:
        def encode_ordinary(self, text: str) -> list[int]:
            raise BaseException("pyo3_runtime.PanicException")  # what tiktoken raises

    tokens.bpe = Panicking()  # type: ignore[assignment]
    with pytest.raises(UncountableText, match="break it up"):
        tokens.count("any text")
