"""A tokenizer's ranks read back from the cache are the ranks decoded from its file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contextls.app import ranks_cache, tokenizers
from contextls.common import places


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(places.CACHE_DIR_ENV, str(folder))
    return folder / "tokenizers"


def _vocabulary(tmp_path: Path) -> Path:
    source = tmp_path / "tiny.tiktoken"
    source.write_bytes(b"YQ== 0\nYg== 1\nYWI= 2\n")
    return source


def test_the_cached_ranks_are_the_decoded_ones(cache_dir: Path, tmp_path: Path) -> None:
    source = _vocabulary(tmp_path)
    decoded: list[int] = []

    def decode() -> dict[bytes, int]:
        decoded.append(1)
        return tokenizers._ranks_of(source.read_bytes())

    first = ranks_cache.cached_ranks("tiny", source, "pin", decode)
    second = ranks_cache.cached_ranks("tiny", source, "pin", decode)
    assert first == second == {b"a": 0, b"b": 1, b"ab": 2}
    assert len(decoded) == 1  # the second came from the file the first wrote
    (written,) = cache_dir.iterdir()
    assert written.stat().st_mode & 0o077 == 0


def test_a_changed_vocabulary_or_pin_is_decoded_again(cache_dir: Path, tmp_path: Path) -> None:
    source = _vocabulary(tmp_path)
    ranks_cache.cached_ranks("tiny", source, "pin", lambda: {b"a": 0})
    assert ranks_cache.cached_ranks("tiny", source, "other pin", lambda: {b"b": 1}) == {b"b": 1}
    source.write_bytes(b"YQ== 5\n")
    os.utime(source, ns=(1, 1))
    assert ranks_cache.cached_ranks("tiny", source, "pin", lambda: {b"a": 5}) == {b"a": 5}
    assert len(list(cache_dir.iterdir())) == 1  # the other versions were removed


def test_an_unreadable_cache_is_decoded_again(cache_dir: Path, tmp_path: Path) -> None:
    source = _vocabulary(tmp_path)
    ranks_cache.cached_ranks("tiny", source, "pin", lambda: {b"a": 0})
    (written,) = cache_dir.iterdir()
    written.write_bytes(b"\xff not marshal")
    assert ranks_cache.cached_ranks("tiny", source, "pin", lambda: {b"a": 0}) == {b"a": 0}


def test_a_cache_that_cannot_be_written_is_done_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(places.CACHE_DIR_ENV, str(blocker))
    source = _vocabulary(tmp_path)
    assert ranks_cache.cached_ranks("tiny", source, "pin", lambda: {b"a": 0}) == {b"a": 0}


def test_o200k_from_its_cache_counts_as_decoded(cache_dir: Path) -> None:
    text = "def greet(name):\n    return f'Grüße, {name}!'  # ünïcödé\n" * 20
    decoded = tokenizers._build("o200k_base")  # writes the cache
    assert any(cache_dir.glob("o200k_base-*.marshal"))
    cached = tokenizers._build("o200k_base")  # reads it
    assert cached.encode_ordinary(text) == decoded.encode_ordinary(text)
    assert cached._mergeable_ranks == decoded._mergeable_ranks
