"""What ``contextls add`` was asked to add: ``PATH[:START[-END]]`` arguments."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from contextls.protocol import Position, Range

GLOB_CHARACTERS: Final = frozenset("*?[")
_LINE_SUFFIX: Final = re.compile(r"^(?P<path>.+?):(?P<start>[0-9]+)(?:-(?P<end>[0-9]+))?$")


class TargetError(ValueError):
    """An ``add`` argument that cannot mean anything (a usage error)."""


@dataclass(frozen=True)
class LineSpan:
    """Lines ``start`` through ``end``, 1-based and inclusive, as people count them."""

    start: int
    end: int

    def to_range(self) -> Range:
        """The LSP range that covers these lines up to and including END's newline."""
        return Range(
            start=Position(line=self.start - 1, character=0),
            end=Position(line=self.end, character=0),
        )

    def __str__(self) -> str:
        return str(self.start) if self.start == self.end else f"{self.start}-{self.end}"


@dataclass(frozen=True)
class AddTarget:
    """One argument of ``add``: a path or glob, and maybe a line span."""

    path: str
    lines: LineSpan | None = None

    @property
    def is_glob(self) -> bool:
        return any(character in GLOB_CHARACTERS for character in self.path)


def parse_target(text: str, exists: Callable[[str], bool] = os.path.exists) -> AddTarget:
    """Split ``src/app.py:10-24`` into a path and a line span.

    ``PATH:N`` is the single line N. A path that exists exactly as written is
    taken whole, so a file whose name ends in ``:12`` still works.
    """
    if not text:
        raise TargetError("an empty path")
    match = _LINE_SUFFIX.match(text)
    if match is None or exists(text):
        return AddTarget(text)
    start = int(match["start"])
    end = int(match["end"]) if match["end"] is not None else start
    if start < 1:
        raise TargetError(f"{text}: lines are counted from 1")
    if end < start:
        raise TargetError(f"{text}: the range ends before it starts")
    target = AddTarget(match["path"], LineSpan(start, end))
    if target.is_glob:
        raise TargetError(f"{text}: a line range needs one file, not a pattern")
    return target
