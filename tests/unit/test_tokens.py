"""Exact token counts with tiktoken, loaded offline (app.tokenizers) and lazily (core.tokens)."""

from __future__ import annotations

import pytest

from contextls.app.tokenizers import load_encoding, tokenizer
from contextls.core.tokens import DEFAULT_ENCODING, Tokenizer
from tests.support.offline_tiktoken import encoding as reference_encoding

OPENAI = ("o200k_base", "cl100k_base")
SAMPLES = (
    "hello world",
    "def main() -> None:\n    print('héllo, wörld')\n",
    "日本語のテキストと emoji 😀🐍 mixed in",
    "    indented\n\n\n\ttabs\r\nand CRLF",
    "x" * 5000,
    "<|endoftext|> is ordinary text here",
)


@pytest.mark.parametrize("name", OPENAI)
@pytest.mark.parametrize("sample", SAMPLES)
def test_counts_match_tiktoken(name: str, sample: str) -> None:
    counted = tokenizer(name).count(sample)
    # An encoding built straight from the bundled BPE file, tiktoken's way, agrees.
    assert counted == len(reference_encoding(name).encode_ordinary(sample))


@pytest.mark.parametrize(
    ("name", "sample", "expected"),
    [
        ("o200k_base", "hello world", 2),
        ("cl100k_base", "hello world", 2),
        ("o200k_base", "Hello, world!", 4),
        ("cl100k_base", "Hello, world!", 4),
        ("o200k_base", " ", 1),
    ],
)
def test_known_counts(name: str, sample: str, expected: int) -> None:
    assert tokenizer(name).count(sample) == expected


def test_the_two_encodings_differ_on_some_text() -> None:
    sample = "日本語のテキストと emoji 😀🐍 mixed in"
    assert tokenizer("o200k_base").count(sample) != tokenizer("cl100k_base").count(sample)


def test_special_token_text_is_counted_as_ordinary_text() -> None:
    counter = tokenizer("o200k_base")
    special = "<|endoftext|>"
    assert counter.count(special) > 1  # split into pieces, not the one special token
    with pytest.raises(ValueError):
        reference_encoding("o200k_base").encode(special)  # what encode() would do


def test_default_encoding_is_o200k_base() -> None:
    assert DEFAULT_ENCODING == "o200k_base"


def test_nothing_loads_until_the_first_count() -> None:
    counter = tokenizer("cl100k_base")
    assert not counter.loaded
    assert counter.count("") == 0
    assert not counter.loaded  # the empty string costs nothing
    assert counter.count("x") == 1
    assert counter.loaded


def test_each_tokenizer_starts_unloaded() -> None:
    tokenizer("o200k_base").count("warm the process-wide cache")
    assert not tokenizer("o200k_base").loaded


def test_load_encoding_is_shared_per_name() -> None:
    assert load_encoding("o200k_base") is load_encoding("o200k_base")
    assert load_encoding("o200k_base") is not load_encoding("cl100k_base")
    assert load_encoding("cl100k_base").name == "cl100k_base"


@pytest.mark.parametrize("name", ["p50k_base", "O200K_BASE", "", "gpt-4o"])
def test_unknown_encoding_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="unknown encoding"):
        Tokenizer(name, load_encoding)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_the_ranks_are_read_as_tiktoken_reads_its_files(name: str) -> None:
    """Every token and rank, as tiktoken's own reading of the file gives them."""
    assert load_encoding(name)._mergeable_ranks == reference_encoding(name)._mergeable_ranks
