"""What a file may ask of the parser: a bound set by design, checked before parsing.

tree-sitter parses any text in linear time, but its query matching is quadratic in the
depth of the tree, and an unclosed bracket makes every later one nest inside it: a
100 KB file of 100,000 ``[`` took 29 s to match (10,000: 0.25 s), while parsing it took
0.45 s. No person's code nests brackets a thousand deep, so a file that does is read as
lines, with the reason said, before a parser sees it.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Final

from contextls.structure.languages import Unsupported

MAX_NESTING: Final = 1_000
"""Brackets nested deeper than this make a file lines, not structure (at 1,000 the
definitions' query takes ~5 ms more than for a flat file of the same size)."""

_DEPTH: Final = bytes.maketrans(b"([{)]}", b"\x01\x01\x01\xff\xff\xff")
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"([{)]}")


class TooDeep(Unsupported):
    """A file whose brackets nest deeper than the parser's budget."""

    def __init__(self, message: str, depth: int) -> None:
        super().__init__(message)
        self.depth = depth


def nesting(source: bytes) -> int:
    """How deep the brackets of ``source`` nest at most (a closing one with nothing open
    is passed over: what matters is how deep a parser's tree can grow)."""
    brackets = source.translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    steps = memoryview(brackets.translate(_DEPTH)).cast("b")  # +1 and -1, read in C
    depths = list(accumulate(steps))
    if min(depths) >= 0:  # nothing closed before it opened: the plain sum is the depth
        return max(depths)
    return max(accumulate(steps, lambda depth, step: max(0, depth + step), initial=0))


def check(source: bytes, where: str = "the file") -> None:
    """Refuse (``TooDeep``, naming ``where``) a text the parser could not read in time."""
    depth = nesting(source)
    if depth > MAX_NESTING:
        raise TooDeep(
            f"{where} nests its brackets {depth:,} deep (more than {MAX_NESTING:,}): "
            "contextls reads it as lines",
            depth,
        )
