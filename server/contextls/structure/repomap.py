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
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from contextls.structure.model import CONTAINERS, Symbol
from contextls.structure.tags import FileFacts

DAMPING: Final = 0.85
ITERATIONS: Final = 40
FOCUS: Final = 10.0
"""How much more a use of a name the window or the query names weighs."""
FAMILIES: Final = {"typescript": "javascript", "tsx": "javascript", "cpp": "c"}
"""Languages whose files use each other's definitions."""
MEMBER_ALONE: Final = 0.2
"""What a use of a method's name weighs when the file names neither its class nor its
module."""
STRONGEST: Final = 40
"""The uses of a file that count: its strongest, so a large repository's graph stays
sparse (a word that merely looks like a name elsewhere weighs little anyway)."""
IMPORTED: Final = 5.0
"""How much more a use weighs when the file also names the definer's module."""
GAP: Final = "⋮"
_INDEX_NAMES: Final = frozenset({"__init__", "index", "mod", "lib", "main"})
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
) -> list[Ranked]:
    """Every listed definition of ``files``, best first. ``focus_files`` and names the
    ``query`` or ``focus_names`` hold personalise the ranking; ``leave_out`` are (path,
    qualified name) pairs already in the window (``(path, "")``: the whole file)."""
    wanted = {w.lower() for w in _QUERY_WORD.findall(query or "")}
    names = set(focus_names) | {n.rpartition(".")[2] for n in focus_names}
    graph = uses(files)
    focused = set(focus_files)
    edges: dict[str, dict[tuple[str, str], float]] = {}
    for path in files:
        base = graph.full[path] if path in focused else graph.strongest[path]
        if names or wanted:
            base = {
                key: weight * FOCUS if key[1] in names or key[1].lower() in wanted else weight
                for key, weight in base.items()
            }
        edges[path] = base
    personal = {path: 1.0 for path in focus_files if path in files}
    for path, facts in files.items():
        named = wanted and any(s.name.lower() in wanted for s in facts.symbols)
        if named or (wanted and any(w in path.lower() for w in wanted)):
            personal[path] = personal.get(path, 0.0) + 1.0
    ranks = pagerank(list(files), edges, personal)
    flows: dict[tuple[str, str], float] = defaultdict(float)
    for path, out in edges.items():
        total = sum(out.values())
        for key, weight in out.items():
            flows[key] += ranks[path] * weight / total
    left = set(leave_out)
    ranked: list[Ranked] = []
    for path, facts in files.items():
        if (path, "") in left:
            continue
        same: dict[str, int] = defaultdict(int)
        kinds = {symbol.qualified: symbol.kind for symbol in facts.symbols}
        for symbol in facts.symbols:
            same[symbol.name] += symbol.listed
        for symbol in facts.symbols:
            if not symbol.listed or (path, symbol.qualified) in left:
                continue
            if symbol.parent is not None and kinds.get(symbol.parent) not in CONTAINERS:
                continue  # a function's own helpers are its body's business
            score = flows.get((path, symbol.name), 0.0) / same[symbol.name]
            if symbol.name.lower() in wanted:
                score += 1.0  # named by the query: before anything merely used (ranks sum to 1)
            ranked.append(Ranked(path, symbol, score + ranks[path] * 1e-3))
    ranked.sort(key=lambda r: (-r.score, r.path, r.symbol.start_line))
    return ranked


@dataclass(slots=True)
class Uses:
    """Which definitions each file uses, weighted: ``full``, and its ``strongest``."""

    files: dict[str, FileFacts]
    full: dict[str, dict[tuple[str, str], float]]
    strongest: dict[str, dict[tuple[str, str], float]]


_known: list[Uses] = []
"""The last repository's uses: ranking again for another window reuses them while
every file's facts are the same objects (the index keeps them while files stay)."""


def uses(files: Mapping[str, FileFacts]) -> Uses:
    if _known and len(_known[0].files) == len(files):
        last = _known[0]
        if all(last.files.get(path) is facts for path, facts in files.items()):
            return last
    definers: dict[str, set[str]] = defaultdict(set)
    holders: dict[tuple[str, str], set[str]] = defaultdict(set)
    """(file, name) -> the names of the classes that hold it, when only members have it."""
    for path, facts in files.items():
        for symbol in facts.symbols:
            if symbol.listed:
                definers[symbol.name].add(path)
                holders[(path, symbol.name)].add(
                    symbol.parent.rpartition(".")[2] if symbol.parent else ""
                )
    defined = definers.keys()
    used = {path: facts.words.keys() & defined for path, facts in files.items()}
    users: dict[str, int] = defaultdict(int)
    for words in used.values():
        for word in words:
            users[word] += 1
    stems = {path: stem(path) for path in files}
    families = {path: FAMILIES.get(f.language, f.language) for path, f in files.items()}
    # What does not depend on the file that uses a word, once per word: its definers by
    # language family, and what the word weighs (rarer is more telling, see below).
    by_family: dict[tuple[str, str], list[str]] = defaultdict(list)
    for word, where in definers.items():
        for definer in where:
            by_family[(word, families[definer])].append(definer)
    worth: dict[str, float] = {}
    for word, count in users.items():
        # A word most files use (a builtin a file happens to define too, a module name)
        # says little about which definition is meant: weigh it by its rarity.
        worth[word] = math.log((1 + len(files)) / count)
        if word.startswith("_") or len(definers[word]) > 5:
            worth[word] *= 0.1
    members = {key: owners for key, owners in holders.items() if "" not in owners}
    full: dict[str, dict[tuple[str, str], float]] = {}
    strongest: dict[str, dict[tuple[str, str], float]] = {}
    for path, facts in files.items():
        out: dict[tuple[str, str], float] = {}
        family = families[path]
        counts = facts.words
        for word in used[path]:
            # Code uses code of its own language: a Go file's ``Format`` is not Python's.
            others = [d for d in by_family.get((word, family), ()) if d != path]
            if not others:
                continue
            weight = math.sqrt(counts[word]) * worth[word] / len(others)
            for definer in others:
                # A file that names the other's module (an import) means its definition;
                # a method's name alone (get, items) rarely means that class's method.
                near = IMPORTED if stems[definer] in counts else 1.0
                owners = members.get((definer, word))
                if owners is not None and not any(map(counts.__contains__, owners)):
                    near *= MEMBER_ALONE
                out[(definer, word)] = weight * near
        full[path] = out
        strongest[path] = (
            dict(heapq.nlargest(STRONGEST, out.items(), key=lambda kv: kv[1]))
            if len(out) > STRONGEST
            else out
        )
    found = Uses(dict(files), full, strongest)
    _known[:] = [found]
    return found


def stem(path: str) -> str:
    """The name an import uses for a file: its name without the suffix, or its folder's
    for a package's index (``__init__.py``, ``index.js``, ``mod.rs``)."""
    parts = path.split("/")
    name = parts[-1].rsplit(".", 1)[0]
    return parts[-2] if name in _INDEX_NAMES and len(parts) > 1 else name


def pagerank(
    nodes: Sequence[str],
    edges: Mapping[str, Mapping[tuple[str, str], float]],
    personal: Mapping[str, float],
) -> dict[str, float]:
    """PageRank of ``nodes`` over weighted edges (to ``(node, name)``), restarting at
    ``personal`` (everywhere alike when empty); a node with no edge restarts."""
    if not nodes:
        return {}
    total = sum(personal.values())
    restart = (
        {node: personal.get(node, 0.0) / total for node in nodes}
        if total > 0
        else dict.fromkeys(nodes, 1.0 / len(nodes))
    )
    targets: dict[str, list[tuple[str, float]]] = {}
    for node in nodes:
        out = edges.get(node, {})
        weight = sum(out.values())
        merged: dict[str, float] = defaultdict(float)
        for (target, _), value in out.items():
            merged[target] += value / weight
        targets[node] = list(merged.items())
    rank = dict(restart)
    for _ in range(ITERATIONS):
        dangling = sum(rank[node] for node in nodes if not targets[node])
        after = {node: (1 - DAMPING + DAMPING * dangling) * restart[node] for node in nodes}
        for node in nodes:
            share = DAMPING * rank[node]
            for target, part in targets[node]:
                after[target] += share * part
        moved = sum(abs(after[node] - rank[node]) for node in nodes)
        rank = after
        if moved < 1e-7:
            break
    return rank


def render(ranked: Sequence[Ranked], files: Mapping[str, FileFacts]) -> str:
    """The map of these definitions: by file (in the order of each file's best), each
    file's lines in order, a gap mark where lines are left out."""
    chosen: dict[str, set[int]] = {}
    holders: dict[str, dict[str, Symbol]] = {}
    for entry in ranked:
        facts = files[entry.path]
        lines = chosen.setdefault(entry.path, set())
        if entry.path not in holders:
            holders[entry.path] = {s.qualified: s for s in reversed(facts.symbols)}
        symbol: Symbol | None = entry.symbol
        while symbol is not None:
            lines.add(symbol.name_line or symbol.start_line)
            parent = symbol.parent
            symbol = holders[entry.path].get(parent) if parent is not None else None
    out: list[str] = []
    for path, lines in chosen.items():
        facts = files[path]
        by_line = {s.name_line or s.start_line: s for s in facts.symbols}
        out.append(f"{path}:")
        previous = 0
        for number in sorted(lines):
            if number != previous + 1:
                out.append(GAP)
            out.append("│" + _header(facts.headers.get(number, ""), by_line.get(number)))
            previous = number
        out.append(GAP)
    return "\n".join(out) + ("\n" if out else "")


def _header(line: str, symbol: Symbol | None) -> str:
    """The naming line, cut where a body on it starts."""
    if symbol is not None and symbol.body_column >= 0:
        return line[: symbol.body_column].rstrip() + " …"
    return line


def fit(
    ranked: Sequence[Ranked],
    files: Mapping[str, FileFacts],
    count: Callable[[str], int],
    share: int,
) -> tuple[str, int]:
    """The map of the most definitions whose text takes at most ``share`` tokens, and
    how many it shows. Token counts are exact (``count``); the search is a bisection
    over how many of the best are shown, then a walk to the largest that fits."""
    low, high = 0, len(ranked)
    best = ""
    while low < high:
        middle = (low + high + 1) // 2
        text = render(ranked[:middle], files)
        if count(text) <= share:
            low, best = middle, text
        else:
            high = middle - 1
    return best, low
