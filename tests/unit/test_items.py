"""Item labels (contextls.core.items.make_label): the short names people see."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextls.core.items import make_label

# Every character str.splitlines() splits on or str.strip() strips, and two letters.
_TRICKY = list(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\u2028\u2029\u3000ab")


@given(st.text(alphabet=st.sampled_from(_TRICKY), max_size=14))
def test_text_is_named_by_its_first_non_blank_line(content: str) -> None:
    first = next((line.strip() for line in content.splitlines() if line.strip()), "")
    assert make_label("text", content, {}) == (first or "text")


@given(st.lists(st.sampled_from(["a", "é", "\n", " " * 150, "x" * 100, "\t"]), max_size=12))
def test_a_label_reads_no_more_of_a_long_line_than_it_shows(pieces: list[str]) -> None:
    """Blanks past what a label's scan reads, then words on the same line: the label is
    the line's, as if it were read to its end."""
    content = "".join(pieces)
    first = next((line.strip() for line in content.splitlines() if line.strip()), "")
    shown = first if len(first) <= 60 else first[:59] + "…"
    assert make_label("text", content, {}) == (shown or "text")


def test_a_long_first_line_is_shortened_and_later_lines_ignored() -> None:
    label = make_label("text", "\n\n   " + "x" * 100 + "\nsecond line", {})
    assert label == "x" * 59 + "…"
    assert len(label) == 60


def test_a_title_or_a_path_wins_over_the_text() -> None:
    assert make_label("text", "body", {"title": "  Plan  "}) == "Plan"
    meta = {"path": "src/app.py", "startLine": 3, "endLine": 9, "symbol": "main"}
    assert make_label("code", "body", meta) == "src/app.py:3-9 (main)"
    assert make_label("file", "body", meta) == "src/app.py (main)"


@pytest.mark.parametrize(
    ("content", "label"),
    [
        (
            'Traceback (most recent call last):\n  File "a.py", line 3, in <module>\n'
            "    x['y']\nKeyError: 'y'\n",
            "KeyError: 'y'",
        ),
        (
            'Traceback (most recent call last):\n  File "x", line 1\nValueError: bad\n\n'
            "The above exception was the direct cause of the following exception:\n\n"
            'Traceback (most recent call last):\n  File "y", line 2\nRuntimeError: worse\n',
            "RuntimeError: worse",
        ),
        ("Error: cannot open the file\n", "cannot open the file"),
        ("warming up\n  ok\nerror[E0308]: mismatched types\n", "[E0308] mismatched types"),
        ("def test_x():\n>       assert 1 == 2\nE       assert 1 == 2\n", "assert 1 == 2"),
        ("something odd happened\nthen more", "something odd happened"),
    ],
)
def test_an_error_is_labelled_by_what_went_wrong(content: str, label: str) -> None:
    assert make_label("error", content, {}) == label
