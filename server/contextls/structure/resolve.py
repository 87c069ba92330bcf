"""A name a person gives, found among a file's definitions.

``Parser.parse`` names one definition by its qualified name; ``parse`` also finds
every definition whose qualified name ends with it; C++'s ``A::b`` is ``A.b``; a
file that defines the same name twice (overloads, a property's getter and setter)
numbers them, and ``name@2`` picks the second.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from contextls.structure.model import Symbol

_OCCURRENCE: Final = re.compile(r"^(?P<name>.+?)@(?P<n>[1-9]\d*)$")


@dataclass(frozen=True, slots=True)
class Wanted:
    """A parsed name: the qualified name and, if given, which occurrence."""

    qualified: str
    occurrence: int | None = None

    @classmethod
    def of(cls, text: str) -> Wanted:
        name = "".join(text.split()).replace("::", ".").strip(".")
        found = _OCCURRENCE.match(name)
        if found:
            return cls(found["name"], int(found["n"]))
        return cls(name)


def resolve(found: Iterable[Symbol], name: str) -> list[Symbol]:
    """The definitions ``name`` may mean: those of exactly that qualified name if any,
    else those whose qualified name ends with it (``parse`` finds ``Parser.parse``)."""
    wanted = Wanted.of(name)
    listed = [symbol for symbol in found if symbol.listed]
    exact = [symbol for symbol in listed if symbol.qualified == wanted.qualified]
    if not exact:
        tail = "." + wanted.qualified
        exact = [symbol for symbol in listed if symbol.qualified.endswith(tail)]
    if wanted.occurrence is not None:
        exact = [symbol for symbol in exact if symbol.occurrence == wanted.occurrence]
    return exact


def near(found: Iterable[Symbol], name: str, count: int = 5) -> list[str]:
    """The qualified names most like ``name``, for an answer that found none."""
    names = sorted({symbol.qualified for symbol in found if symbol.listed})
    wanted = Wanted.of(name).qualified
    close = difflib.get_close_matches(wanted, names, n=count, cutoff=0.6)
    last = wanted.rpartition(".")[2].lower()
    close += [n for n in names if last and last in n.lower() and n not in close]
    return close[:count]
