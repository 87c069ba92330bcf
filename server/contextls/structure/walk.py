"""The walk a map is ranked by: how a file's rank spreads over the uses it makes, and
PageRank over the files along them.

What a ranking works out of the graph is kept with it (``Uses``) for the next one: each
file's spread while its uses stay the same object, the walk's positions while the files
stay the same, a file's uses weighed for a focus while the focus stays, and the uses by
number. A ranking after one file changed works out again only what that changed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple

DAMPING: Final = 0.85
ITERATIONS: Final = 100
"""At most; the walk ends when a step moves the ranks less than ``SETTLED``."""
SETTLED: Final = 1e-5
"""How little a step of the walk moves the ranks (summed) when they have settled: from
everywhere alike, ~37 steps over CPython's ``Lib/``; from the last ranking's ranks (a
file changed, the window moved), a few."""


@dataclass(frozen=True, slots=True)
class Spread:
    """How a file's rank spreads over ``uses`` (a file's ``strongest``, or those a
    ranking weighed again): their sum, and the part each file they point to gets; and
    the uses by number (``Numbering``) with their weights, in their order."""

    uses: Mapping[tuple[str, str], float]
    total: float
    parts: list[tuple[str, float]]
    ids: list[int]
    weights: list[float]


class Refocused(NamedTuple):
    """A file's uses weighed for a focus: ``uses`` with the uses of ``names`` weighed
    more (``weighed``)."""

    names: frozenset[str]
    uses: Mapping[tuple[str, str], float]
    weighed: dict[tuple[str, str], float]


@dataclass(slots=True)
class Numbering:
    """Uses (definer, name) by number: what flows to each is added up in a list indexed
    by it, not in a dict keyed by tuples (whose hash is worked out at every addition)."""

    keys: list[tuple[str, str]] = field(default_factory=list)
    numbers: dict[tuple[str, str], int] = field(default_factory=dict)

    def of(self, key: tuple[str, str]) -> int:
        number = self.numbers.get(key)
        if number is None:
            number = self.numbers[key] = len(self.keys)
            self.keys.append(key)
        return number


@dataclass(slots=True)
class Walk:
    """A ranking's files in order and, for each, the positions of the files its rank
    spreads to, with their parts (from its ``Spread``). Kept between rankings: only the
    files whose spread is another object are worked out again."""

    nodes: list[str]
    spreads: list[Spread]
    targets: list[list[tuple[int, float]]]


def spread(uses: Mapping[tuple[str, str], float], numbering: Numbering) -> Spread:
    """How a file's rank spreads over ``uses`` (in their order, as the walk adds it)."""
    total = sum(uses.values())
    merged: dict[str, float] = defaultdict(float)
    for (target, _), value in uses.items():
        merged[target] += value / total
    ids = [numbering.of(key) for key in uses]
    return Spread(uses, total, list(merged.items()), ids, list(uses.values()))


def kept_walk(walk: Walk | None, nodes: list[str], spreads: Mapping[str, Spread]) -> Walk:
    """What the walk over ``nodes`` goes along: ``walk`` (the last ranking's), with the
    files whose spread changed worked out again (made anew when the files are others)."""
    if walk is None or walk.nodes != nodes:
        made = [spreads[node] for node in nodes]
        return Walk(nodes, made, _positions(nodes, made))
    changed = [i for i, node in enumerate(nodes) if spreads[node] is not walk.spreads[i]]
    if changed:
        index = {node: i for i, node in enumerate(nodes)}
        for i in changed:
            now = walk.spreads[i] = spreads[nodes[i]]
            walk.targets[i] = [(index[target], part) for target, part in now.parts]
    return walk


def _positions(nodes: Sequence[str], made: Sequence[Spread]) -> list[list[tuple[int, float]]]:
    index = {node: i for i, node in enumerate(nodes)}
    return [[(index[target], part) for target, part in spread.parts] for spread in made]


def restart(nodes: Sequence[str], personal: Mapping[str, float]) -> list[float]:
    """Where the walk restarts, by position: at ``personal``, else everywhere alike."""
    total = sum(personal.values())
    if total > 0:
        return [personal.get(node, 0.0) / total for node in nodes]
    return [1.0 / len(nodes)] * len(nodes) if nodes else []


def settle(
    nodes: Sequence[str],
    targets: Sequence[Sequence[tuple[int, float]]],
    begin: list[float],
    start: Mapping[str, float] | None,
) -> dict[str, float]:
    """The ranks of ``nodes``, each pointing to ``targets`` (positions in ``nodes``, and
    the part of its rank each gets), restarting at ``begin``: the walk runs over
    positions (lists, not dicts keyed by path: a ranking of 1,800 files is a third as
    long), adding in the same order as by path."""
    if not nodes:
        return {}
    dead = [i for i, moves in enumerate(targets) if not moves]
    walked = list(begin)
    if start:
        known = [start.get(node, value) for node, value in zip(nodes, begin, strict=True)]
        total = sum(known)
        if total > 0:
            walked = [value / total for value in known]
    for _ in range(ITERATIONS):
        dangling = sum(walked[i] for i in dead)
        jump = 1 - DAMPING + DAMPING * dangling
        after = [jump * value for value in begin]
        for i, moves in enumerate(targets):
            share = DAMPING * walked[i]
            for position, part in moves:
                after[position] += share * part
        moved = sum(abs(a - b) for a, b in zip(after, walked, strict=True))
        walked = after
        if moved < SETTLED:
            break
    return dict(zip(nodes, walked, strict=True))
