"""A file the parser could not read in time is lines, said why, before a parser sees it."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest

from contextls.app import code_index
from contextls.app.code_index import CodeIndex
from contextls.app.sources import Sources
from contextls.structure.budget import MAX_NESTING, TooDeep, nesting
from contextls.structure.languages import Unsupported
from contextls.structure.symbols import symbols
from contextls.structure.tags import FileFacts, facts


def test_nesting_is_the_deepest_bracket() -> None:
    assert nesting(b"") == 0
    assert nesting(b"f(a[1], {b: (2)})") == 3
    assert nesting(b"[" * 5000) == 5000
    assert nesting(b"(" * 3000 + b")" * 3000 + b"[" * 10) == 3000
    assert nesting(b")" * 5000 + b"(" * 2000) == 2000  # closers first cannot hide depth


def test_unclosed_brackets_are_refused_before_parsing_and_say_why() -> None:
    with pytest.raises(TooDeep, match="100,000 deep") as refused:
        symbols("[" * 100_000, "python")
    assert isinstance(refused.value, Unsupported)  # callers read it as lines
    with pytest.raises(TooDeep):
        facts("x = " + "(" * 20_000 + "\ndef f():\n    pass\n", "javascript")


def test_code_that_nests_as_people_write_it_is_parsed() -> None:
    deep = "x = " + "[" * (MAX_NESTING - 10) + "]" * (MAX_NESTING - 10) + "\n"
    found = symbols(deep + "def after():\n    return 1\n", "python")
    assert [s.name for s in found] == ["after"]


def test_a_text_refused_once_is_refused_again_without_reading_its_brackets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor asks which definition holds the cursor at every move: a file over the
    budget is refused from what the index remembers while its text stays the same."""
    read: list[str] = []

    def counted(text: str, language: str) -> FileFacts:
        read.append(text)
        return facts(text, language)

    monkeypatch.setattr(code_index, "facts", counted)
    index = CodeIndex(Sources(tmp_path, lambda uri: None))
    hostile = "[" * 100_000
    for _ in range(3):
        with pytest.raises(TooDeep, match="100,000 deep") as refused:
            index.facts_of("brackets.py", hostile)
        assert len(traceback.extract_tb(refused.tb)) < 10  # no frames pile up on it
    assert len(read) == 1
    with pytest.raises(TooDeep):  # another file of the same text is its own
        index.facts_of("other.py", hostile)
    assert len(read) == 2
    fixed = "def f():\n    return [1]\n"  # the brackets closed: parsed again
    assert [s.name for s in index.facts_of("brackets.py", fixed).symbols] == ["f"]
    assert len(read) == 3
