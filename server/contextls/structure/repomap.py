"""A map of a repository's definitions, ranked by how much the code uses them and
fitted to a token share (never over it), with no bodies.

The ranking is a PageRank over files: a file that uses a name another file defines
points to it, weighted by how often (square root) and how rare the name is among the
files (as in tf-idf), five times as much when the file also names the definer's
module (an import), and spread over the files that define that name; the walk
restarts at the files in the window and those a query names, so what the window's
code uses ranks first. A definition's score is the rank
that flows to it over those uses. The map lists the best definitions, each as the
line that names it (cut where a one-line body starts), under the lines that name
what holds it, grouped by file.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from contextls.structure.model import Symbol
from contextls.structure.tags import FileFacts
from contextls.structure.uses import Listed, Uses, uses
from contextls.structure.walk import (
    Numbering,
    Refocused,
    Spread,
    kept_walk,
    restart,
    settle,
    spread,
)

FOCUS: Final = 10.0
"""How much more a use of a name the window or the query names weighs."""
RENUMBER_SLACK: Final = 1024
"""The uses a graph's numbering may hold past twice those its files make now before it
numbers them again (each file's spread made again, once)."""
GAP: Final = "⋮"
_QUERY_WORD: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


@dataclass(frozen=True, slots=True)
class Ranked:
    path: str
    symbol: Symbol
    score: float


def rank(
    files: Mapping[str, FileFacts],
    focus_files: Collection[str] = (),
    focus_names: Collection[str] = (),
    query: str | None = None,
    leave_out: Collection[tuple[str, str]] = (),
    known: list[Uses] | None = None,
    limit: int | None = None,
) -> list[Ranked]:
    """Every listed definition of ``files`` (the ``limit`` best), best first.
    ``focus_files`` and names the ``query`` or ``focus_names`` hold personalise the
    ranking; ``leave_out`` are (path, qualified name) pairs already in the window
    (``(path, "")``: the whole file); ``known``: the uses of the last ranking of this
    repository, kept by the caller."""
    wanted = {w.lower() for w in _QUERY_WORD.findall(query or "")}
    names = set(focus_names) | {n.rpartition(".")[2] for n in focus_names}
    graph = uses(files, known if known is not None else [])
    focused = set(focus_files)
    # The defined names the focus or the query name (the query's words in any case).
    focus_words = frozenset(names.union(*(graph.spelled.get(word, ()) for word in wanted)))
    edges: dict[str, Mapping[tuple[str, str], float]] = {}
    empty: frozenset[str] = frozenset()
    last, graph.refocused = graph.refocused, {}
    for path in files:
        base = graph.edges(path) if path in focused else graph.strongest[path]
        if focus_words and not focus_words.isdisjoint(graph.used.get(path, empty)):
            kept = last.get(path)
            if kept is None or kept.uses is not base or kept.names != focus_words:
                weighed = {
                    key: weight * FOCUS if key[1] in focus_words else weight
                    for key, weight in base.items()
                }
                kept = Refocused(focus_words, base, weighed)
            graph.refocused[path] = kept
            base = kept.weighed
        edges[path] = base
    personal = {path: 1.0 for path in focus_files if path in files}
    for path in files if wanted else ():
        named = not wanted.isdisjoint(graph.lowered[path])
        if named or any(w in path.lower() for w in wanted):
            personal[path] = personal.get(path, 0.0) + 1.0
    spreads = _spreads(graph, edges)
    nodes = list(files)
    graph.walk = kept_walk(graph.walk, nodes, spreads)
    ranks = settle(nodes, graph.walk.targets, restart(nodes, personal), graph.ranks)
    graph.ranks = ranks
    added = [0.0] * len(graph.numbering.keys)
    for path in nodes:
        made, rank_of = spreads[path], ranks[path]
        if rank_of:  # nothing flows from a file the walk never reaches
            total = made.total
            for number, weight in zip(made.ids, made.weights, strict=True):
                added[number] += rank_of * weight / total
    keys = graph.numbering.keys
    flows = {keys[number]: flow for number, flow in enumerate(added) if flow}
    scoring = _Scoring(graph, ranks, flows, wanted, set(leave_out))
    return scoring.every(files) if limit is None else scoring.best(files, limit)


def _spreads(
    graph: Uses, edges: Mapping[str, Mapping[tuple[str, str], float]]
) -> dict[str, Spread]:
    """How each file's rank spreads over its ``edges``: the graph's, made again for the
    files whose edges are others. The uses are numbered again when most numbers are of
    uses no file makes any longer (files changed, queries came and went)."""
    spreads = graph.spread
    for path in [path for path in spreads if path not in edges]:
        del spreads[path]
    numbered = sum(len(made.ids) for made in spreads.values())
    if len(graph.numbering.keys) > 2 * numbered + RENUMBER_SLACK:
        graph.numbering = Numbering()
        spreads.clear()
    for path, out in edges.items():
        made = spreads.get(path)
        if made is None or made.uses is not out:
            spreads[path] = spread(out, graph.numbering)
    return spreads


Scored = tuple[float, str, int, Symbol]
"""A definition scored: minus its score, its file, its line, itself (smallest first)."""


@dataclass(frozen=True, slots=True)
class _Scoring:
    """What the definitions are scored from: the graph, the walk's ranks, what flows to
    each (file, name), the query's words (``wanted``) and what the window holds already
    (``left``). A definition's score is the rank that flows to its name in its file
    (shared by the definitions of that name there), one the query names gains 1, and
    the rank of its file breaks ties (a thousandth)."""

    graph: Uses
    ranks: Mapping[str, float]
    flows: Mapping[tuple[str, str], float]
    wanted: set[str]
    left: set[tuple[str, str]]

    def every(self, files: Iterable[str]) -> list[Ranked]:
        """Every definition of ``files`` but those left out, best first."""
        scored: list[Scored] = []
        for path in files:
            if (path, "") not in self.left:
                self._score(path, self.graph.listing[path], scored)
        return [
            Ranked(path, symbol, -score) for score, path, _, symbol in sorted(scored, key=_order)
        ]

    def best(self, files: Iterable[str], limit: int) -> list[Ranked]:
        """The ``limit`` best definitions of ``files``, best first, as ``every`` orders
        them. Only the names something flows to or the query names are scored first, and
        only the definitions of the best of them are looked at; then those of the files
        whose rank alone could place them."""
        graph, ranks, flows, wanted = self.graph, self.ranks, self.flows, self.wanted
        whole = {path for path, name in self.left if not name}
        positions = graph.positions
        keyed: list[tuple[float, str, str]] = []
        for (path, name), flow in flows.items():
            named = positions[path].get(name)
            if named is not None and path not in whole:
                score = flow / named.same
                if named.lowered in wanted:
                    score += 1.0  # named by the query: before anything merely used
                keyed.append((-(score + ranks[path] * 1e-3), path, name))
        for path in files if wanted else ():
            if path not in whole and not wanted.isdisjoint(graph.lowered[path]):
                for name, named in positions[path].items():
                    if named.lowered in wanted and (path, name) not in flows:
                        keyed.append((-(1.0 + ranks[path] * 1e-3), path, name))
        best = self._first(sorted(keyed), limit)
        # What is left of a file scores its file's rank alone: it may only place where
        # that beats the worst of the best (or where fewer than ``limit`` were scored).
        worst = best[-1][0] if len(best) == limit else math.inf
        more: list[Scored] = []
        for path in files:
            if path not in whole and -(ranks[path] * 1e-3) <= worst:
                entries = [
                    e
                    for e in graph.listing[path]
                    if (path, e.symbol.name) not in flows and e.lowered not in wanted
                ]
                self._score(path, entries, more)
        if more:
            best = heapq.nsmallest(limit, best + more, key=_order)
        return [Ranked(path, symbol, -score) for score, path, _, symbol in best]

    def _first(self, keyed: list[tuple[float, str, str]], limit: int) -> list[Scored]:
        """The ``limit`` best definitions of the names ``keyed`` scores (best first), by
        score, file, line and place in the file: the names are taken in order until they
        hold ``limit`` definitions and none left scores as the last taken in its file."""
        taken: list[tuple[float, str, int, int, Symbol]] = []
        last: tuple[float, str] | None = None
        left = self.left
        for score, path, name in keyed:
            if len(taken) >= limit and (score, path) != last:
                break
            listing = self.graph.listing[path]
            for position in self.graph.positions[path][name].where:
                symbol = listing[position].symbol
                if not (left and (path, symbol.qualified) in left):
                    taken.append((score, path, symbol.start_line, position, symbol))
            last = (score, path)
        taken.sort(key=lambda entry: entry[:4])
        return [(score, path, line, symbol) for score, path, line, _, symbol in taken[:limit]]

    def _score(self, path: str, entries: Iterable[Listed], scored: list[Scored]) -> None:
        left, flows, wanted, tie = self.left, self.flows, self.wanted, self.ranks[path] * 1e-3
        for entry in entries:
            symbol = entry.symbol
            if left and (path, symbol.qualified) in left:
                continue
            score = flows.get((path, symbol.name), 0.0) / entry.same
            if entry.lowered in wanted:
                score += 1.0  # named by the query: before anything merely used (ranks sum to 1)
            scored.append((-(score + tie), path, symbol.start_line, symbol))


def _order(entry: Scored) -> tuple[float, str, int]:
    return entry[0], entry[1], entry[2]


@dataclass(frozen=True, slots=True)
class Shown:
    """One definition as the map draws it: its file, and its naming line with those of
    what holds it, each (line number, the line as drawn). The map's own process ranks
    and sends these; the daemon fits them to the share with the window's tokenizer."""

    path: str
    lines: tuple[tuple[int, str], ...]


def shown(ranked: Sequence[Ranked], files: Mapping[str, FileFacts]) -> list[Shown]:
    """Each of these definitions as the map draws it."""
    holders: dict[str, dict[str, Symbol]] = {}
    naming: dict[str, dict[int, Symbol]] = {}
    out: list[Shown] = []
    for entry in ranked:
        facts = files[entry.path]
        if entry.path not in holders:
            holders[entry.path] = {s.qualified: s for s in reversed(facts.symbols)}
            naming[entry.path] = {s.name_line or s.start_line: s for s in facts.symbols}
        lines: list[tuple[int, str]] = []
        symbol: Symbol | None = entry.symbol
        while symbol is not None:
            number = symbol.name_line or symbol.start_line
            drawn = _header(facts.headers.get(number, ""), naming[entry.path].get(number))
            lines.append((number, "│" + drawn))
            parent = symbol.parent
            symbol = holders[entry.path].get(parent) if parent is not None else None
        out.append(Shown(entry.path, tuple(lines)))
    return out


def draw(entries: Sequence[Shown]) -> str:
    """The map of these definitions: by file (in the order of each file's best), each
    file's lines in order, a gap mark where lines are left out."""
    chosen: dict[str, dict[int, str]] = {}
    for entry in entries:
        chosen.setdefault(entry.path, {}).update(entry.lines)
    out: list[str] = []
    for path, lines in chosen.items():
        out.append(f"{path}:")
        previous = 0
        for number in sorted(lines):
            if number != previous + 1:
                out.append(GAP)
            out.append(lines[number])
            previous = number
        out.append(GAP)
    return "\n".join(out) + ("\n" if out else "")


def render(ranked: Sequence[Ranked], files: Mapping[str, FileFacts]) -> str:
    """The map of these definitions (``draw`` of what ``shown`` makes of them)."""
    return draw(shown(ranked, files))


def _header(line: str, symbol: Symbol | None) -> str:
    """The naming line, cut where a body on it starts."""
    if symbol is not None and symbol.body_column >= 0:
        return line[: symbol.body_column].rstrip() + " …"
    return line


def fit(
    entries: Sequence[Shown], count: Callable[[str], int], share: int, tail: str = ""
) -> tuple[str, int]:
    """The map of the most of these definitions (best first) whose text, ``tail`` after
    it, takes at most ``share`` tokens, and how many it shows. Token counts are exact
    (``count``); the search is a bisection over how many of the best are shown."""
    # Each definition shown takes a line of at least one token: no more than ``share``
    # of them can fit, so the bisection never draws more.
    low, high = 0, min(len(entries), share)
    best = ""
    while low < high:
        middle = (low + high + 1) // 2
        text = draw(entries[:middle]) + tail
        if count(text) <= share:
            low, best = middle, text
        else:
            high = middle - 1
    return best, low
