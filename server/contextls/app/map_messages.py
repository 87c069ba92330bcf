"""What the daemon and the maps' own process say to each other (``map_process`` sends,
``map_ranker`` answers): the kinds of message, each request and each answer. Small by
design: a request carries the window's focus, never the files' facts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from contextls.structure.model import Symbol

RANK: Final = "rank"
FIND: Final = "find"
PREPARE: Final = "prepare"
CANCEL: Final = "cancel"
STOP: Final = "stop"
PROGRESS: Final = "progress"
ANSWERED: Final = "answered"
FAILED: Final = "failed"


@dataclass(frozen=True, slots=True)
class MapRequest:
    """What one ranking needs from the window, taken on the daemon's loop."""

    root: str
    max_bytes: int
    query: str | None
    share: int
    focus_files: frozenset[str]
    focus_names: frozenset[str]
    leave_out: frozenset[tuple[str, str]]
    encoding: str
    """The window's tokenizer: the map is fitted in its tokens."""


@dataclass(frozen=True, slots=True)
class FindRequest:
    """A definition's name, looked for in every file of a workspace."""

    root: str
    max_bytes: int
    name: str


@dataclass(frozen=True, slots=True)
class Found:
    """The definitions ``name`` means, by file (in the workspace's order), and, when there
    are none, the nearest names (at most 5, as ``FILE::name``)."""

    hits: list[tuple[str, Symbol]]
    near: list[str]
    unmapped: int = 0
    """The workspace's files not looked in (over ``code_index.mapped_megabytes``, as for a map)."""


@dataclass(frozen=True, slots=True)
class Preparation:
    """A workspace whose map is made ready before it is asked for."""

    root: str
    max_bytes: int
    encoding: str
    """The window's tokenizer, loaded ahead too."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """What a preparation did: the workspace's files mapped, how many of them were read
    (parsed, or taken from the facts cache), and those left out."""

    files: int
    parsed: int
    unmapped: int
    already: bool = False
    """The process held the workspace already (a map or a name was asked first)."""
    skipped: str = ""
    """Why the workspace was not prepared (else empty)."""
    unread: int = 0
    """Its files that could not be read (not UTF-8, over the parser's budget...)."""


Version = tuple[int, int]
"""(the map process's id, its code index's version): what the files were when ranked."""


@dataclass(frozen=True, slots=True)
class Ranking:
    """The map's text and how many definitions it shows ("" and 0 when ``unchanged``)."""

    text: str
    definitions: int
    version: Version
    unchanged: bool = False
    """Nothing changed since the ranking the daemon said it holds: that map stands."""
    unmapped: int = 0
    """The workspace's files left out of the map (over ``code_index.mapped_megabytes``)."""
