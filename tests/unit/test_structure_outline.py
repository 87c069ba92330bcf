"""Outlines of real code: every definition's naming line stays, every body becomes one
``…`` line at the body's indentation, and nothing else changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextls.structure.languages import language_of
from contextls.structure.outline import MARK, outline
from contextls.structure.symbols import symbols

DATA = Path(__file__).resolve().parents[1] / "data" / "structure"
CODE = [
    Path(json.__file__).parent / "decoder.py",
    *sorted(p for p in DATA.rglob("*") if p.suffix in (".go", ".rs", ".js", ".ts", ".java", ".c")),
]


@pytest.mark.parametrize("path", CODE, ids=lambda p: p.name)
def test_an_outline_keeps_every_naming_line_and_hides_bodies(path: Path) -> None:
    text = path.read_text()
    language = language_of(path.name)
    assert language is not None
    found = symbols(text, language)
    shown = outline(text, found)
    lines = text.split("\n")
    kept = shown.split("\n")
    hidden = {n for s in found if s.fold for n in range(s.fold.first, s.fold.last + 1)}
    for symbol in found:
        if symbol.name_line not in hidden:  # a definition inside a body goes with it
            assert lines[symbol.name_line - 1] in kept, symbol.qualified
    markers = [line for line in kept if line.strip() == MARK]
    assert len(markers) >= len({s.fold.first for s in found if s.fold}) - len(hidden) // 2
    bodies = [s for s in found if s.fold and s.kind in ("function", "method")]
    for symbol in bodies[:5]:  # a body's own text is gone
        assert symbol.fold is not None
        body = "\n".join(lines[symbol.fold.first - 1 : symbol.fold.last])
        assert body not in shown or not body.strip()
    assert len(shown) < len(text) * 0.6


def test_a_python_outline_reads_as_the_code_shape() -> None:
    text = '''class Store:
    """Rows by key.

    More words.
    """

    def get(self, key):
        """The row of key."""
        return self.rows[key]

    def put(self, key, value): self.rows[key] = value
'''
    assert (
        outline(text, symbols(text, "python"))
        == '''class Store:
    """Rows by key.
    …

    def get(self, key):
        """The row of key."""
        …

    def put(self, key, value): self.rows[key] = value
'''
    )
