"""What a use of each defined name weighs, and which files define it: worked out once
per name for the files of a repository's graph weighed together (``uses``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final, Protocol

MOST_DEFINERS: Final = 32
"""A name defined in more files than this (``__init__``, ``get``, ``run``) says nothing
about which definition a use means: its weight would be spread over all of them, and
following it costs more than the rest of the graph together (CPython's ``Lib/``)."""
Name = tuple[float, list[str]] | None
"""What a use of a name weighs and the files of a language family that define it; None
when a use of it says nothing of which definition is meant."""
UNSEEN: Final[Name] = (0.0, [])
"""A name not worked out yet (``Names.unknown``)."""


class Graph(Protocol):
    """What the names are weighed from (a ``Uses``)."""

    @property
    def files(self) -> Mapping[str, object]: ...
    @property
    def definers(self) -> Mapping[str, set[str]]: ...
    @property
    def users(self) -> Mapping[str, int]: ...
    @property
    def families(self) -> Mapping[str, str]: ...
    @property
    def stems(self) -> Mapping[str, str]: ...


class Names:
    """What a use of each defined name weighs and which files of each language family
    define it, worked out once per name for the files weighed together (a name is used
    by many files: CPython's ``Lib/`` weighs 190,000 uses of 40,000 names)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.total = 1 + len(graph.files)
        self.known: dict[str, dict[str, Name]] = {}
        """family -> name -> what ``unknown`` found."""
        self.by_stem: dict[str, set[str]] = {}
        """A module's name as imported (``stem``) -> the files of that name."""
        for definer, name in graph.stems.items():
            self.by_stem.setdefault(name, set()).add(definer)

    def of(self, family: str) -> dict[str, Name]:
        """What is known of the names, for the files of ``family``."""
        return self.known.setdefault(family, {})

    def unknown(self, word: str, family: str) -> Name:
        """The weight and the definers in ``family`` of ``word``, kept."""
        graph = self.graph
        where = graph.definers.get(word)
        name: Name = None
        if where and len(where) <= MOST_DEFINERS:
            # Code uses code of its own language: a Go file's ``Format`` is not Python's.
            families = graph.families
            same = [definer for definer in where if families[definer] == family]
            if same:
                # A word most files use (a builtin a file happens to define too, a module
                # name) says little about which definition is meant: weigh it by rarity.
                worth = math.log(self.total / max(graph.users.get(word, 1), 1))
                if word.startswith("_") or len(where) > 5:
                    worth *= 0.1
                name = (worth, same)
        self.of(family)[word] = name
        return name

    def imported(self, counts: Mapping[str, int]) -> set[str]:
        """The files whose module a file with these words names (it may import them)."""
        stems = counts.keys() & self.by_stem.keys()
        return set().union(*(self.by_stem[name] for name in stems)) if stems else set()
