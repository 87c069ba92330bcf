"""Item labels (contextls.core.items.make_label): the short names people see."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from contextls.core.items import make_label

# Every character str.splitlines() splits on or str.strip() strips, and two letters.
_TRICKY = list(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\u2028\u2029\u3000ab")


@given(st.text(alphabet=st.sampled_from(_TRICKY), max_size=14))
def test_text_is_named_by_its_first_non_blank_line(content: str) -> None:
    first = next((line.strip() for line in content.splitlines() if line.strip()), "")
    assert make_label("text", content, {}) == (f"text: {first}" if first else "text")


def test_a_long_first_line_is_shortened_and_later_lines_ignored() -> None:
    label = make_label("error", "\n\n   " + "x" * 100 + "\nsecond line", {})
    assert label == "error: " + "x" * 52 + "…"
    assert len(label) == 60


def test_a_title_or_a_path_wins_over_the_text() -> None:
    assert make_label("text", "body", {"title": "  Plan  "}) == "Plan"
    meta = {"path": "src/app.py", "startLine": 3, "endLine": 9, "symbol": "main"}
    assert make_label("code", "body", meta) == "src/app.py:3-9 (main)"
    assert make_label("file", "body", meta) == "src/app.py (main)"
