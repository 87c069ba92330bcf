"""Which definitions each file of a repository uses: the graph a map is ranked over.

A file's use of a name another file defines is an edge, weighted by how often the file
says it (square root) and how rare the name is among the files (as in tf-idf), five
times as much when the file also names the definer's module (an import), and spread
over the files that define that name. The graph is kept by its owner (one per
workspace) and brought up to date file by file as files change.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from contextls.structure.model import CONTAINERS, Symbol
from contextls.structure.names import MOST_DEFINERS, UNSEEN, Names
from contextls.structure.tags import FileFacts
from contextls.structure.walk import Numbering, Refocused, Spread, Walk

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
_INDEX_NAMES: Final = frozenset({"__init__", "index", "mod", "lib", "main"})


INCREMENTAL_SHARE: Final = 0.1
"""Up to this share of the files changed, the uses are brought up to date file by file;
beyond it, made again (the rarity of each name is exact again then)."""


@dataclass(slots=True)
class Uses:
    """Which definitions each file uses, weighted: its ``strongest`` uses (the full set is
    made for a file only when the window focuses on it, see ``edges``). Kept by its owner
    (one per workspace) and brought up to date as files change (``uses``)."""

    files: dict[str, FileFacts] = field(default_factory=dict)
    definers: dict[str, set[str]] = field(default_factory=dict)
    """name -> the files that define it (listed definitions)."""
    spelled: dict[str, set[str]] = field(default_factory=dict)
    """A defined name in lower case -> the names of ``definers`` it is (a query's words
    name definitions in any case)."""
    members: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    """(file, name) -> the classes holding it, when only members of classes have it."""
    users: Counter[str] = field(default_factory=Counter)
    """name -> how many files use it."""
    used: dict[str, frozenset[str]] = field(default_factory=dict)
    """file -> the defined names it uses."""
    strongest: dict[str, dict[tuple[str, str], float]] = field(default_factory=dict)
    families: dict[str, str] = field(default_factory=dict)
    """file -> its language's family (``FAMILIES``), for the files that define names."""
    stems: dict[str, str] = field(default_factory=dict)
    """file -> ``stem(file)``, for the files that define names."""
    listing: dict[str, list[Listed]] = field(default_factory=dict)
    """file -> the definitions a map may list, in the file's order (``listed``)."""
    positions: dict[str, dict[str, Named]] = field(default_factory=dict)
    """file -> name -> where in its ``listing`` the definitions of that name are."""
    lowered: dict[str, frozenset[str]] = field(default_factory=dict)
    """file -> the names of all its definitions, lower case (a query's words name them)."""
    ranks: dict[str, float] = field(default_factory=dict)
    """file -> its PageRank in the last ranking, where the next one's walk starts."""
    complete: bool = True
    """False for a graph ``begin`` started: its files are defined, their uses not made."""
    spread: dict[str, Spread] = field(default_factory=dict)
    """file -> how its rank spreads over its uses, by the uses it was worked out from (a
    ranking works it out again only for a file whose uses are not those)."""
    walk: Walk | None = None
    """The last ranking's graph as its walk goes over it (by position)."""
    refocused: dict[str, Refocused] = field(default_factory=dict)
    """file -> its uses weighed for the last ranking's focus, when that named a name it
    uses (kept: the next ranking has the same focus, and then the same spread)."""
    numbering: Numbering = field(default_factory=lambda: Numbering())
    """The uses a spread was made of, numbered (``Spread.ids``)."""

    def edges(
        self,
        path: str,
        weighed: list[tuple[str, float, list[str]]] | None = None,
    ) -> dict[tuple[str, str], float]:
        """Every use ``path`` makes of another file's definition: (definer, name) -> weight
        (``weighed``: its ``_weighed``, when made already)."""
        counts = self.files[path].words
        if weighed is None:
            weighed = self._weighed(path, Names(self))
        return {
            (definer, word): weight * self._near(definer, word, counts)
            for word, weight, others in weighed
            for definer in others
        }

    def _weighed(self, path: str, names: Names) -> list[tuple[str, float, list[str]]]:
        """Each defined name ``path`` uses, what a use of it weighs, and the other files
        that define it, in the order ``edges`` lists them."""
        facts = self.files[path]
        family = FAMILIES.get(facts.language, facts.language)
        counts = facts.words
        known = names.of(family)
        found: list[tuple[str, float, list[str]]] = []
        for word in self.used.get(path, ()):
            name = known.get(word, UNSEEN)
            if name is UNSEEN:
                name = names.unknown(word, family)
            if name is None:
                continue
            worth, same = name
            others = [d for d in same if d != path] if path in same else same
            if others:
                found.append((word, math.sqrt(counts[word]) * worth / len(others), others))
        return found

    def _near(self, definer: str, word: str, counts: Counter[str]) -> float:
        # A file that names the other's module (an import) means its definition; a
        # method's name alone (get, items) rarely means that class's method.
        near = IMPORTED if self.stems[definer] in counts else 1.0
        owners = self.members.get((definer, word))
        if owners is not None and not any(map(counts.__contains__, owners)):
            near *= MEMBER_ALONE
        return near

    def _strongest(self, path: str, names: Names) -> dict[tuple[str, str], float]:
        """The ``STRONGEST`` uses of ``edges``, as ``heapq.nlargest`` picks them (the first
        listed of equal weights), strongest first. The names are weighed in the order of
        the most a use of each can weigh, and those that cannot reach the strongest are
        left unweighed (two thirds of the uses of CPython's ``Lib/``)."""
        # A use weighs at most ``IMPORTED`` times its name's weight when the file names a
        # definer's module, else at most its weight (``MEMBER_ALONE`` only lowers it):
        # that bounds what a name not yet weighed can bring.
        weighed = self._weighed(path, names)
        if sum(len(others) for _, _, others in weighed) <= STRONGEST:
            return self.edges(path, weighed)
        counts = self.files[path].words
        imported = names.imported(counts)
        firsts: list[tuple[float, int, str, float, list[str]]] = []
        position = 0
        for word, weight, others in weighed:
            most = weight * IMPORTED if imported and not imported.isdisjoint(others) else weight
            firsts.append((most, position, word, weight, others))
            position += len(others)
        firsts.sort(key=lambda entry: -entry[0])
        best: list[tuple[float, int, tuple[str, str]]] = []  # (weight, -position, use)
        for most, first, word, weight, others in firsts:
            if len(best) == STRONGEST and most < best[0][0]:
                break
            for offset, definer in enumerate(others):
                entry = (
                    weight * self._near(definer, word, counts),
                    -(first + offset),
                    (definer, word),
                )
                if len(best) < STRONGEST:
                    heapq.heappush(best, entry)
                elif entry > best[0]:
                    heapq.heapreplace(best, entry)
        best.sort(key=lambda entry: (-entry[0], -entry[1]))
        return {use: weight for weight, _, use in best}

    def _define(self, path: str, facts: FileFacts, sign: int) -> set[str]:
        """Add (``sign`` 1) or take out (-1) what ``path`` defines; the names touched."""
        names: set[str] = set()
        holders: dict[str, set[str]] = {}
        for symbol in facts.symbols:
            if symbol.listed:
                names.add(symbol.name)
                holders.setdefault(symbol.name, set()).add(
                    symbol.parent.rpartition(".")[2] if symbol.parent else ""
                )
        if sign > 0:
            self.families[path] = FAMILIES.get(facts.language, facts.language)
            self.stems[path] = stem(path)
            listing = self.listing[path] = listed(facts)
            positions: dict[str, Named] = {}
            for position, entry in enumerate(listing):
                named = positions.get(entry.symbol.name)
                if named is None:
                    named = positions[entry.symbol.name] = Named([], entry.same, entry.lowered)
                named.where.append(position)
            self.positions[path] = positions
            self.lowered[path] = frozenset(symbol.name.lower() for symbol in facts.symbols)
        else:
            self.listing.pop(path, None)
            self.positions.pop(path, None)
            self.lowered.pop(path, None)
        for name in names:
            where = self.definers.get(name)
            if where is None:
                where = self.definers[name] = set()
                self.spelled.setdefault(name.lower(), set()).add(name)
            if sign > 0:
                where.add(path)
                owners = holders[name]
                if "" not in owners:
                    self.members[(path, name)] = owners
            else:
                where.discard(path)
                self.members.pop((path, name), None)
                if not where:
                    del self.definers[name]
                    spellings = self.spelled[name.lower()]
                    spellings.discard(name)
                    if not spellings:
                        del self.spelled[name.lower()]
        return names

    def _use(self, path: str, facts: FileFacts) -> None:
        words = self.used[path] = frozenset(facts.words.keys() & self.definers.keys())
        self.users.update(words)

    def _unuse(self, path: str) -> None:
        for word in self.used.pop(path, frozenset()):
            left = self.users.get(word, 1) - 1
            if left > 0:
                self.users[word] = left
            else:
                self.users.pop(word, None)

    def _keep_strongest(self, paths: Iterable[str]) -> None:
        names = Names(self)
        for path in paths:
            self.strongest[path] = self._strongest(path, names)


class Listed(NamedTuple):
    """A definition a map may list: a listed one whose holder (if any) holds others (a
    tuple: a ranking's graph makes one per definition of the repository)."""

    symbol: Symbol
    lowered: str
    """Its name, lower case."""
    same: int
    """How many listed definitions of its file have its name (they share its uses)."""


class Named(NamedTuple):
    """The definitions of one name in a file's ``listing``: they share its uses."""

    where: list[int]
    """Their positions in the listing."""
    same: int
    lowered: str


def listed(facts: FileFacts) -> list[Listed]:
    """The definitions of a file a map may list: a function's own helpers are its body's
    business."""
    same: dict[str, int] = defaultdict(int)
    kinds = {symbol.qualified: symbol.kind for symbol in facts.symbols}
    for symbol in facts.symbols:
        same[symbol.name] += symbol.listed
    return [
        Listed(symbol, symbol.name.lower(), same[symbol.name])
        for symbol in facts.symbols
        if symbol.listed and (symbol.parent is None or kinds.get(symbol.parent) in CONTAINERS)
    ]


def uses(files: Mapping[str, FileFacts], known: list[Uses]) -> Uses:
    """Which definitions each file uses. ``known`` holds the last repository's uses (its
    owner's: one per workspace); a file whose facts are the same object as then (the
    index keeps them while the file stays) is not looked at again: only the files that
    changed and those that use the names they define or defined are."""
    last = known[0] if known else None
    if last is not None and last.complete:
        changed = [p for p, f in files.items() if last.files.get(p) is not f]
        gone = [p for p in last.files if p not in files]
        if not changed and not gone:
            return last
        if len(changed) + len(gone) <= INCREMENTAL_SHARE * max(len(files), 1):
            _update(last, files, changed, gone)
            return last
    found = last if last is not None and not last.complete else Uses()
    for path in [path for path, facts in found.files.items() if files.get(path) is not facts]:
        found._define(path, found.files.pop(path), -1)
    for path, facts in files.items():
        if path not in found.files:
            found._define(path, facts, 1)
    found.files = dict(files)
    for path, facts in files.items():
        found._use(path, facts)
    found._keep_strongest(files)
    found.complete = True
    known[:] = [found]
    return found


def begin(known: list[Uses], path: str, facts: FileFacts) -> None:
    """Define what ``path`` defines in a graph not made yet (``known`` empty, or holding a
    graph begun so): the first ranking's defining is done while the other files are read
    (``uses`` makes the rest)."""
    if known and known[0].complete:
        return
    if not known:
        known.append(Uses(complete=False))
    graph = known[0]
    old = graph.files.get(path)
    if old is facts:
        return
    if old is not None:
        graph._define(path, old, -1)
    graph.files[path] = facts
    graph._define(path, facts, 1)


def _update(
    graph: Uses, files: Mapping[str, FileFacts], changed: list[str], gone: list[str]
) -> None:
    before = {
        name: len(graph.definers.get(name, ()))
        for path in [*changed, *gone]
        if path in graph.files
        for name in (s.name for s in graph.files[path].symbols if s.listed)
    }
    defined: dict[str, set[str]] = {}
    for path in [*changed, *gone]:
        old = graph.files.get(path)
        if old is not None:
            defined[path] = graph._define(path, old, -1)
            graph._unuse(path)
            graph.strongest.pop(path, None)
            del graph.files[path]
    touched: set[str] = set()
    for path in gone:
        touched |= defined.get(path, set())
    for path in changed:
        graph.files[path] = files[path]
        # A name the file defined before and still does has the same definers.
        touched |= defined.get(path, set()) ^ graph._define(path, files[path], 1)
    # Who uses the names those files define (or defined): their uses change too. A name
    # with too many definers before and after is followed by nobody (``edges``).
    touched = {
        name
        for name in touched
        if min(before.get(name, 0), len(graph.definers.get(name, ()))) <= MOST_DEFINERS
    }
    again = set(changed)
    for path, facts in graph.files.items():
        if path in again:
            continue
        words = facts.words
        if any(name in words for name in touched):
            graph._unuse(path)
            graph._use(path, facts)
            again.add(path)
    for path in changed:
        graph._use(path, files[path])
    graph._keep_strongest(again)


def stem(path: str) -> str:
    """The name an import uses for a file: its name without the suffix, or its folder's
    for a package's index (``__init__.py``, ``index.js``, ``mod.rs``)."""
    parts = path.split("/")
    name = parts[-1].rsplit(".", 1)[0]
    return parts[-2] if name in _INDEX_NAMES and len(parts) > 1 else name
