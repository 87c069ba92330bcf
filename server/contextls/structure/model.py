"""What a definition is: its names, kind, lines, and what an outline hides of it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

CONTAINERS: Final = frozenset(
    {"class", "struct", "interface", "enum", "trait", "impl", "module", "namespace", "type"}
)
"""Kinds whose bodies are their members (an outline shows them); others' bodies are code."""


@dataclass(frozen=True, slots=True)
class Fold:
    """The lines of a body an outline hides (1-based, inclusive)."""

    first: int
    last: int


@dataclass(slots=True)
class Symbol:
    name: str
    qualified: str
    kind: str
    start_line: int
    """1-based, the first line of the definition (decorators included)."""
    end_line: int
    fold: Fold | None = None
    """What an outline hides of it: the body of a function, none of a class."""
    listed: bool = True
    """False for a scope that only names what it holds (a Rust ``impl``)."""
    occurrence: int = 1
    """Which definition of the same qualified name in the file this is, counting from 1."""
    parent: str | None = None
    """The qualified name of the definition that holds it."""
    name_line: int = 0
    """The line that names it (the ``def`` below its decorators); 0: its first line."""
    body_column: int = -1
    """Where its body starts on the line that names it (a one-line ``def f(): return 1``),
    in characters; -1: the body starts on a later line (or it has none)."""

    @property
    def lines(self) -> tuple[int, int]:
        return self.start_line, self.end_line

    @property
    def display(self) -> str:
        """The qualified name, with ``@N`` when the file defines it more than once."""
        return self.qualified if self.occurrence == 1 else f"{self.qualified}@{self.occurrence}"
