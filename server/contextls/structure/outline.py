"""A file (or one definition) as its outline: what it defines and how it is called,
without the bodies. Signatures stay whole, and so do a docstring's first line, a
class's members and the lines between definitions (imports, constants); each body
becomes one ``…`` line at its indentation, and a closing bracket on a line of its
own stays, so the outline reads as the code's shape. A run of comment lines (a doc
comment, a licence) keeps its first line with words."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from contextls.structure.model import Symbol

MARK: Final = "…"


def outline(text: str, found: Sequence[Symbol], span: tuple[int, int] | None = None) -> str:
    """The outline of ``text`` (its lines ``span``, 1-based inclusive, when given), from the
    definitions ``found`` in it. Without a fold inside, the text is returned as it is."""
    lines = text.split("\n")
    first, last = span if span is not None else (1, len(lines))
    hidden = _hidden(found, first, last)
    hidden.update(_comment_folds(lines, first, last, hidden))
    out: list[str] = []
    number = first
    while number <= last and number <= len(lines):
        end = hidden.get(number)
        if end is None:
            out.append(lines[number - 1])
            number += 1
            continue
        # The indentation of the first line with words: a docstring's rest may open blank.
        line = next((ln for ln in lines[number - 1 : end] if ln.strip()), lines[number - 1])
        indent = line[: len(line) - len(line.lstrip())]
        out.append(f"{indent}{MARK}")
        number = end + 1
    result = "\n".join(out)
    if span is None or (last >= len(lines)):
        return result
    return result + "\n" if text.endswith("\n") or last < len(lines) else result


def _hidden(found: Sequence[Symbol], first: int, last: int) -> dict[int, int]:
    """First hidden line -> last hidden line, for the folds inside ``first..last``, an
    outer fold swallowing the folds it holds."""
    folds = sorted(
        (s.fold.first, s.fold.last)
        for s in found
        if s.fold is not None and first <= s.start_line and s.end_line <= last
    )
    merged: dict[int, int] = {}
    current: tuple[int, int] | None = None
    for start, end in folds:
        if current is not None and start <= current[1]:
            current = (current[0], max(current[1], end))
            merged[current[0]] = current[1]
            continue
        current = (start, end)
        merged[start] = end
    return merged


_COMMENT: Final = re.compile(r"\s*(?://|/\*|\*|#(?![!\[])|;)")
_WORDS: Final = re.compile(r"\w{2,}")


def _comment_folds(
    lines: list[str], first: int, last: int, hidden: dict[int, int]
) -> dict[int, int]:
    """A run of comment lines (a doc comment, a licence) as its first line with words:
    the rest of the run is hidden when that hides two lines or more."""
    inside: set[int] = set()
    for start, end in hidden.items():
        inside.update(range(start, end + 1))
    folds: dict[int, int] = {}
    number = first
    while number <= last and number <= len(lines):
        if number in inside or not _COMMENT.match(lines[number - 1]):
            number += 1
            continue
        end = number
        opened = lines[number - 1].lstrip().startswith("/*") and "*/" not in lines[number - 1]
        while end + 1 <= last and end + 1 not in inside and end + 1 <= len(lines):
            if opened:  # a block comment runs to its close, whatever its lines start with
                opened = "*/" not in lines[end]
            elif not _COMMENT.match(lines[end]):
                break
            end += 1
        worded = next((n for n in range(number, end + 1) if _WORDS.search(lines[n - 1])), number)
        if end - worded >= 2:
            folds[worded + 1] = end
        number = end + 1
    return folds


def shrinks(text: str, found: Sequence[Symbol], span: tuple[int, int] | None = None) -> bool:
    """Whether an outline hides anything of ``text`` (its ``span``)."""
    first, last = span if span is not None else (1, text.count("\n") + 1)
    return bool(_hidden(found, first, last))
