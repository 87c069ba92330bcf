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
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from contextls.structure.model import Symbol
from contextls.structure.tags import FileFacts
from contextls.structure.uses import Listed, Uses, spread, uses

DAMPING: Final = 0.85
ITERATIONS: Final = 100
"""At most; the walk ends when a step moves the ranks less than ``SETTLED``."""
SETTLED: Final = 1e-5
"""How little a step of the walk moves the ranks (summed) when they have settled: from
everywhere alike, ~37 steps over CPython's ``Lib/``; from the last ranking's ranks (a
file changed, the window moved), a few."""
FOCUS: Final = 10.0
"""How much more a use of a name the window or the query names weighs."""
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
    focus_words = names.union(*(graph.spelled.get(word, ()) for word in wanted))
    edges: dict[str, dict[tuple[str, str], float]] = {}
    empty: frozenset[str] = frozenset()
    for path in files:
        base = graph.edges(path) if path in focused else graph.strongest[path]
        if focus_words and not focus_words.isdisjoint(graph.used.get(path, empty)):
            base = {
                key: weight * FOCUS if key[1] in focus_words else weight
                for key, weight in base.items()
            }
        edges[path] = base
    personal = {path: 1.0 for path in focus_files if path in files}
    for path in files if wanted else ():
        named = not wanted.isdisjoint(graph.lowered[path])
        if named or any(w in path.lower() for w in wanted):
            personal[path] = personal.get(path, 0.0) + 1.0
    spreads = graph.spread
    for path, out in edges.items():
        made = spreads.get(path)
        if made is None or made.uses is not out:
            spreads[path] = spread(out)
    for path in [path for path in spreads if path not in files]:
        del spreads[path]
    ranks = pagerank(
        list(files), {path: spreads[path].parts for path in files}, personal, graph.ranks
    )
    graph.ranks = ranks
    flows: dict[tuple[str, str], float] = defaultdict(float)
    for path, out in edges.items():
        total = spreads[path].total
        for key, weight in out.items():
            flows[key] += ranks[path] * weight / total
    return _best(files, graph, ranks, flows, wanted, set(leave_out), limit)


def _best(
    files: Mapping[str, FileFacts],
    graph: Uses,
    ranks: Mapping[str, float],
    flows: Mapping[tuple[str, str], float],
    wanted: set[str],
    left: set[tuple[str, str]],
    limit: int | None,
) -> list[Ranked]:
    """The ``limit`` best definitions (all, best first, without a limit). A definition's
    score is the rank that flows to it, one the query names gains 1, and the rank of its
    file breaks ties (a thousandth): only the definitions something flows to or the query
    names are scored first, then those of the files whose rank alone could place them."""
    flowing: dict[str, set[int]] = defaultdict(set)
    for path, name in flows:
        positions = graph.positions[path].get(name)
        if positions is not None:
            flowing[path].update(positions)
    scored: list[tuple[float, str, int, Symbol]] = []
    rest: list[str] = []
    for path in files:
        if (path, "") in left:
            continue
        listing = graph.listing[path]
        if limit is None:
            chosen: Iterable[int] = range(len(listing))
        else:
            chosen = flowing.get(path, set())
            if wanted and not wanted.isdisjoint(graph.lowered[path]):
                chosen = chosen | {i for i, e in enumerate(listing) if e.lowered in wanted}
            if len(chosen) < len(listing):
                rest.append(path)
            chosen = sorted(chosen)
        _score(path, [listing[i] for i in chosen], ranks, flows, wanted, left, scored)
    if limit is None:
        return [
            Ranked(path, symbol, -score) for score, path, _, symbol in sorted(scored, key=_order)
        ]
    best = heapq.nsmallest(limit, scored, key=_order)
    # What is left of a file scores its file's rank alone: it may only place where that
    # beats the worst of the best (or where fewer than ``limit`` were scored).
    worst = best[-1][0] if len(best) == limit else math.inf
    more: list[tuple[float, str, int, Symbol]] = []
    for path in rest:
        if -(ranks[path] * 1e-3) <= worst:
            chosen = flowing.get(path, set())
            entries = [
                e
                for i, e in enumerate(graph.listing[path])
                if i not in chosen and e.lowered not in wanted
            ]
            _score(path, entries, ranks, flows, wanted, left, more)
    if more:
        best = heapq.nsmallest(limit, best + more, key=_order)
    return [Ranked(path, symbol, -score) for score, path, _, symbol in best]


def _score(
    path: str,
    entries: Iterable[Listed],
    ranks: Mapping[str, float],
    flows: Mapping[tuple[str, str], float],
    wanted: set[str],
    left: set[tuple[str, str]],
    scored: list[tuple[float, str, int, Symbol]],
) -> None:
    for entry in entries:
        symbol = entry.symbol
        if left and (path, symbol.qualified) in left:
            continue
        score = flows.get((path, symbol.name), 0.0) / entry.same
        if entry.lowered in wanted:
            score += 1.0  # named by the query: before anything merely used (ranks sum to 1)
        scored.append((-(score + ranks[path] * 1e-3), path, symbol.start_line, symbol))


def _order(entry: tuple[float, str, int, Symbol]) -> tuple[float, str, int]:
    return entry[0], entry[1], entry[2]


def pagerank(
    nodes: Sequence[str],
    parts: Mapping[str, Sequence[tuple[str, float]]],
    personal: Mapping[str, float],
    start: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """PageRank of ``nodes`` over weighted edges (``parts``: the share of a node's rank
    each node it points to gets), restarting at ``personal`` (everywhere alike when empty);
    a node with no edge restarts. The walk starts from ``start`` (the last ranks of much
    the same graph) when given."""
    if not nodes:
        return {}
    total = sum(personal.values())
    restart = (
        {node: personal.get(node, 0.0) / total for node in nodes}
        if total > 0
        else dict.fromkeys(nodes, 1.0 / len(nodes))
    )
    # The walk runs over positions in ``nodes`` (lists, not dicts keyed by path: a
    # ranking of 1,800 files is a third as long), adding in the same order as by path.
    index = {node: i for i, node in enumerate(nodes)}
    targets = [[(index[target], part) for target, part in parts.get(node, ())] for node in nodes]
    begin = [restart[node] for node in nodes]
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
