"""What code is embedded from: each chunk headed by the words of the names it sits in and
the names that start in it, so a chunk from the middle of a class still says which
method it is, and ``isWeekend`` reads as "is weekend". The real tokenizer and model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextls.semantic import names
from contextls.semantic.chunks import CHUNK_PIECES
from contextls.semantic.indexer import embed_item
from contextls.semantic.model import Embedder

CALENDAR = """\
export class Calendar {
  isWeekend(date) {
    const day = date.getDay();
    return day === 0 || day === 6;
  }

  previousWednesday(date) {
""" + "".join(f"    const step{n} = date.getDate() - {n};\n" for n in range(400)) + """\
    return date;
  }
}
"""


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def test_a_name_reads_as_its_words() -> None:
    assert names.words_of("DateTime.startOf") == "date time start of"
    assert names.words_of("find_cycle") == "find cycle"
    assert names.words_of("XMLHttpRequest") == "xml http request"


def test_every_chunk_says_which_definition_it_sits_in(embedder: Embedder) -> None:
    metadata = {"path": "src/calendar.js", "language": "javascript"}
    chunks = names.chunk_pieces(embedder, CALENDAR, metadata)
    assert len(chunks) > 3
    heads = [embedder.tokenizer.decode(chunk[:40]) for chunk in chunks]
    assert "is weekend" in heads[0] and "previous wednesday" in heads[0], heads[0]
    for head in heads[1:]:  # inside the long method: its name and signature lead
        assert head.startswith("calendar · calendar previous wednesday"), head
        assert "previouswednesday ( date )" in head, head
    assert all(len(chunk) <= CHUNK_PIECES for chunk in chunks)


def test_text_that_is_not_code_is_embedded_as_it_is(embedder: Embedder) -> None:
    note = "Remember to rotate the deploy keys on Friday."
    assert names.chunk_pieces(embedder, note, {}) == [embedder.pieces(note)]


def test_brackets_nested_past_any_real_code_are_not_parsed(embedder: Embedder) -> None:
    deep = "x = " + "(" * 5000 + "\n"
    assert names.definitions(deep, {"path": "deep.py"}) == []
    assert embed_item(embedder, deep, {"path": "deep.py"}).shape[0] >= 1


def test_an_item_added_by_its_name_is_headed_by_it(embedder: Embedder) -> None:
    method = "startOf(unit) {\n  return this.set(unit);\n}\n"  # a method cut from its class
    metadata = {"path": "src/datetime.js", "symbol": "DateTime.startOf"}
    (chunk,) = names.chunk_pieces(embedder, method, metadata)
    assert embedder.tokenizer.decode(chunk).startswith("datetime · date time start of")


class _CountingEncoding:
    """The real tokenizer's encoding, counting how often its offsets are read (each read
    of ``offsets`` makes a list of every piece's)."""

    def __init__(self, encoding: Any, reads: list[int]) -> None:
        self._encoding, self._reads = encoding, reads

    @property
    def ids(self) -> Any:
        return self._encoding.ids

    @property
    def offsets(self) -> Any:
        self._reads.append(1)
        return self._encoding.offsets


def test_a_long_file_is_chunked_reading_its_offsets_once(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[int] = []
    tokenizer = embedder.tokenizer
    encode = tokenizer.encode

    class Counting:
        def __getattr__(self, name: str) -> Any:
            return getattr(tokenizer, name)

        def encode(self, *args: Any, **kwargs: Any) -> _CountingEncoding:
            return _CountingEncoding(encode(*args, **kwargs), reads)

    monkeypatch.setattr(embedder, "tokenizer", Counting())
    chunks = names.chunk_pieces(embedder, CALENDAR * 3, {"path": "src/calendar.js"})
    assert len(chunks) > 10
    assert len(reads) == 1


@pytest.mark.parametrize("package", ["json", "email", "asyncio"])
def test_the_headings_of_a_text_s_chunks_are_each_chunk_s_heading(package: str) -> None:
    """Found in one sweep (third-party code: the standard library), the same as each
    chunk's heading found on its own; a chunk asked out of order as well."""
    stdlib = Path(json.__file__).parent.parent
    compared = 0
    for path in sorted((stdlib / package).rglob("*.py")):
        text = path.read_text()
        for metadata in ({"path": f"{package}/{path.name}"}, {"path": "x.py", "symbol": "A.b"}):
            found = names.definitions(text, metadata)
            if metadata.get("symbol"):
                found = [names.Definition(0, len(text), "A.b", "def b(self)"), *found]
            headings = names.Headings(found, str(metadata["path"]))
            lines = text.count("\n") + 1
            asked = [(first, first + 40) for first in range(1, lines, 30)] + [(1, 40)]
            for first, last in asked:
                expected = names.heading(found, first, last, str(metadata["path"]))
                assert headings.of(first, last) == expected, (path, first, last)
                compared += 1
    assert compared > 90
