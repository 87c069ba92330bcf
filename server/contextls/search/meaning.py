"""Search by meaning, as the rest of the server sees it: a provider and its registry.

The provider (``contextls.semantic``, an optional extra) registers itself when the
server is wired (``lsp``); until then, and where it is not installed, search by
meaning is unavailable and says why, and every search falls back to words.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Nearest:
    """What search by meaning says about one query over one workspace's archive."""

    hits: list[tuple[str, float]] = field(default_factory=list)
    """Archived items nearest to the query, as (id, cosine), best first."""
    rows: int = 0
    """Vectors the query was scored against (an item has one per chunk)."""
    asked: dict[str, float] = field(default_factory=dict)
    """The cosines of the items asked about by id that have vectors."""


class MeaningProvider(Protocol):
    """What search by meaning offers one database file."""

    @property
    def available(self) -> bool: ...

    @property
    def reason(self) -> str:
        """Why it is unavailable ("" when it is available)."""
        ...

    @property
    def model_id(self) -> str: ...

    def availability(self) -> dict[str, Any]:
        """``SemanticStatus`` of the process (available or why not, the model), camelCase
        keys. Must not load a model: every CLI command asks for it first."""
        ...

    def status(self, root: str, archived: int) -> dict[str, Any]:
        """``SemanticStatus`` of ``root`` (whose archive holds ``archived`` items), camelCase
        keys. Must not load a model: a server started for one ``status`` answers at once."""
        ...

    @property
    def unloaded(self) -> bool:
        """The model has not been loaded, nor found unable to run, yet."""
        ...

    def load(self) -> None:
        """Load the model now (a worker thread does for a first search: ~0.5 s)."""
        ...

    def catches_up(self, root: str, archived: int) -> bool:
        """Whether a search of ``root`` would embed a small backlog first (``catch_up``)."""
        ...

    def catch_up(self, root: str, archived: int) -> int:
        """Embed a small backlog of ``root`` before a search; how many items still wait."""
        ...

    def embeds_query(self, query: str) -> bool:
        """Whether a search for ``query`` would embed it first (not made ahead)."""
        ...

    def embed_query(self, query: str) -> None:
        """Embed ``query`` now, ahead of its search (a worker thread does: the model's
        process may be busy with a batch of the backlog), and keep its vector."""
        ...

    def search(
        self, root: str, query: str, limit: int, kinds: Sequence[str] | None
    ) -> list[tuple[str, float]]:
        """Archived items of ``root`` nearest to ``query``, as (id, cosine), best first."""
        ...

    def nearest(
        self,
        root: str,
        query: str,
        limit: int,
        kinds: Sequence[str] | None,
        asked: Sequence[str] = (),
    ) -> Nearest:
        """``search``, with how many vectors it scored and the cosines of ``asked``."""
        ...

    def index_some(self, idle: Callable[[], bool]) -> bool | None:
        """Idle work: None while it runs, False when nothing waits."""
        ...

    def forgotten(self) -> None:
        """Items were forgotten: their vectors go before the scrub that follows."""
        ...


class Unavailable:
    """Search by meaning where no provider is registered."""

    available = False
    model_id = ""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def availability(self) -> dict[str, Any]:
        return {"available": False, "reason": self.reason}

    def status(self, root: str, archived: int) -> dict[str, Any]:
        return self.availability()

    unloaded = False

    def load(self) -> None:
        return None

    def catches_up(self, root: str, archived: int) -> bool:
        return False

    def embeds_query(self, query: str) -> bool:
        return False

    def embed_query(self, query: str) -> None:
        return None

    def catch_up(self, root: str, archived: int) -> int:
        return 0

    def search(
        self, root: str, query: str, limit: int, kinds: Sequence[str] | None
    ) -> list[tuple[str, float]]:
        return []

    def nearest(
        self,
        root: str,
        query: str,
        limit: int,
        kinds: Sequence[str] | None,
        asked: Sequence[str] = (),
    ) -> Nearest:
        return Nearest()

    def index_some(self, idle: Callable[[], bool]) -> bool | None:
        return False

    def forgotten(self) -> None:
        return None


_NOT_WIRED = Unavailable("search by meaning is not part of this process")
_provider_for: Callable[[str], MeaningProvider] | None = None


def register(provider_for: Callable[[str], MeaningProvider]) -> None:
    """Make ``provider_for(database location)`` the provider of search by meaning."""
    global _provider_for
    _provider_for = provider_for


def meaning_for(location: str) -> MeaningProvider:
    return _NOT_WIRED if _provider_for is None else _provider_for(location)
