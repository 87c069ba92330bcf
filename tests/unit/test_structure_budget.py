"""A file the parser could not read in time is lines, said why, before a parser sees it."""

from __future__ import annotations

import pytest

from contextls.structure.budget import MAX_NESTING, TooDeep, nesting
from contextls.structure.languages import Unsupported
from contextls.structure.symbols import symbols
from contextls.structure.tags import facts


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
