"""Cutting an LSP range out of a document's text.

LSP positions count lines split at ``\\n``, ``\\r\\n`` or ``\\r`` and characters
in UTF-16 code units (the default position encoding), so a line holding emoji
or other astral characters needs converting before Python can slice it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from contextls.core.errors import ContextError, InvalidParams
from contextls.protocol import ErrorCode

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass(frozen=True, slots=True)
class Slice:
    content: str
    start_line: int
    """1-based, inclusive."""
    end_line: int
    """1-based, inclusive: a range ending at column 0 of a line stops at the line before."""


def lines_with_ends(text: str) -> list[str]:
    return _LINE.findall(text)


def utf16_to_index(line: str, character: int) -> int:
    """Python index in ``line`` of the UTF-16 offset ``character`` (clamped to the line)."""
    if line.isascii():
        return min(character, len(line))
    units = 0
    for index, char in enumerate(line):
        if units >= character:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line)


Position = tuple[int, int]
"""An LSP position as (line, UTF-16 character), both 0-based."""


def check_range(start: Position, end: Position) -> None:
    if end < start:
        raise InvalidParams("$.range", "the range ends before it starts")


def display_lines(start: Position, end: Position) -> tuple[int, int]:
    """The 1-based inclusive lines a range covers; one that stops at column 0 of a line
    does not include that line."""
    last = end[0] if end[1] == 0 and end[0] > start[0] else end[0] + 1
    return start[0] + 1, last


def slice_range(text: str, start: Position, end: Position, label: str = "the document") -> Slice:
    """The text between two LSP positions; an end past the last line is clamped."""
    check_range(start, end)
    lines = lines_with_ends(text)
    (start_line, start_char), (end_line, end_char) = start, end
    if not lines:
        raise ContextError(f"{label} is empty", ErrorCode.INVALID_RANGE)
    if start_line >= len(lines):
        raise ContextError(
            f"the range starts at line {start_line + 1}, but {label} has "
            f"{len(lines)} line{'' if len(lines) == 1 else 's'}",
            ErrorCode.INVALID_RANGE,
        )
    if end_line >= len(lines):
        end_line, end_char = len(lines) - 1, _utf16_length(lines[-1])
    start_index = utf16_to_index(_strip_eol(lines[start_line]), start_char)
    end_index = utf16_to_index(_strip_eol(lines[end_line]), end_char)
    if end_line == start_line:
        content = lines[start_line][start_index:end_index]
    else:
        content = (
            lines[start_line][start_index:]
            + "".join(lines[start_line + 1 : end_line])
            + lines[end_line][:end_index]
        )
    if not content.strip():
        raise InvalidParams("$.range", "the range holds no text")
    first, last = display_lines((start_line, start_char), (end_line, end_char))
    return Slice(content=content, start_line=first, end_line=max(last, first))


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def _utf16_length(line: str) -> int:
    stripped = _strip_eol(line)
    return sum(2 if ord(char) > 0xFFFF else 1 for char in stripped)
