"""What a parse found is kept by the text's digest across restarts; a broken cache is
passed over, never an error. The workers read the cache, and write what they parsed
as a job of its own once a gather's files are read (``parse_jobs.keep_facts``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextls.app import parse_jobs
from contextls.app.facts_cache import decode
from contextls.app.parse_jobs import Read, keep_facts, read_files
from contextls.structure.tags import FileFacts

SOURCE = "class Parser:\n    def parse(self, text):\n        return text.split()\n"


def test_a_second_read_takes_the_facts_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTEXTLS_FACTS_CACHE", str(tmp_path / "facts.sqlite3"))
    monkeypatch.setattr(parse_jobs, "_caches", {})
    (tmp_path / "a.py").write_text(SOURCE)
    (tmp_path / "b.py").write_text(SOURCE)  # the same text elsewhere: the same facts
    (first,) = read_files(str(tmp_path), ["a.py"], 1_000_000, "build-1")
    assert first.data is not None and not first.cached
    (unkept,) = read_files(str(tmp_path), ["a.py"], 1_000_000, "build-1")
    assert not unkept.cached  # a worker does not write the cache
    keep_facts([(first.text_hash, first.language, first.data)], "build-1")
    monkeypatch.setattr(parse_jobs, "_caches", {})  # as a restarted worker

    def no_parse(text: str, language: str) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(parse_jobs, "facts", no_parse)
    again, other = read_files(str(tmp_path), ["a.py", "b.py"], 1_000_000, "build-1")
    assert again.cached and other.cached and again.data == first.data == other.data
    assert [s.qualified for s in facts_of(again).symbols] == ["Parser", "Parser.parse"]
    with pytest.raises(AssertionError, match="parsed again"):  # another build parses anew
        monkeypatch.setattr(parse_jobs, "_caches", {})
        read_files(str(tmp_path), ["a.py"], 1_000_000, "build-2")


def test_a_cache_that_is_not_a_database_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "facts.sqlite3"
    broken.write_bytes(b"not a database at all" * 100)
    monkeypatch.setenv("CONTEXTLS_FACTS_CACHE", str(broken))
    monkeypatch.setattr(parse_jobs, "_caches", {})
    (tmp_path / "a.py").write_text(SOURCE)
    (read,) = read_files(str(tmp_path), ["a.py"], 1_000_000, "build-1")
    assert facts_of(read).symbols[0].name == "Parser"
    keep_facts([(read.text_hash, read.language, facts_of_data(read))], "build-1")  # passed over


def facts_of(read: Read) -> FileFacts:
    assert read.data is not None, read.why
    return decode(read.data)


def facts_of_data(read: Read) -> bytes:
    assert read.data is not None, read.why
    return read.data


def test_a_workers_write_leaves_no_log_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker keeps its connection to the cache: what it wrote is in the database, not
    in a write-ahead log as large as the write, while the worker lives."""
    path = tmp_path / "facts.sqlite3"
    monkeypatch.setenv("CONTEXTLS_FACTS_CACHE", str(path))
    monkeypatch.setattr(parse_jobs, "_caches", {})
    for n in range(40):
        (tmp_path / f"m{n}.py").write_text(SOURCE + f"\ndef f{n}():\n    return {n}\n" * 50)
    reads = read_files(str(tmp_path), [f"m{n}.py" for n in range(40)], 1_000_000, "build-1")
    keep_facts([(read.text_hash, read.language, facts_of_data(read)) for read in reads], "build-1")
    assert path.stat().st_size > 0
    assert (tmp_path / "facts.sqlite3-wal").stat().st_size == 0
    monkeypatch.setattr(parse_jobs, "_caches", {})  # another worker reads them
    assert all(
        read.cached for read in read_files(str(tmp_path), ["m0.py", "m39.py"], 10**6, "build-1")
    )
