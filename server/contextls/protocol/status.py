"""What the server tells: items, the window's status, evictions."""

from __future__ import annotations

from typing import Literal

from contextls.protocol.wire import (
    BudgetPolicy,
    Encoding,
    EvictionPolicy,
    ItemKind,
    ItemView,
    Metadata,
    Task,
    Wire,
)

__all__ = [
    "CacheEstimate",
    "ContextItem",
    "DidEvictParams",
    "DidWarnParams",
    "EvictionReason",
    "ItemSummary",
    "Pruned",
    "RefusedFolder",
    "SecretFound",
    "SemanticStatus",
    "Status",
]


class ContextItem(Wire):
    """One piece of marked context.

    ``metadata`` carries ``uri``, ``path`` (relative to the workspace root),
    ``startLine``/``endLine`` (1-based, inclusive, for display), ``language``,
    ``symbol``, ``symbolKind``, ``source`` and any keys the client added.
    """

    id: str
    kind: ItemKind
    content: str
    label: str
    timestamp: int
    tokens: int
    metadata: Metadata = {}
    pinned: bool = False
    stale: bool = False
    view: ItemView = "whole"
    """``outline``: a file or class shown without its bodies (``wholeTokens`` in the
    metadata: what it takes whole); ``map``: a map of the repository."""


class ItemSummary(Wire):
    """A short reference to an item, for status lines and notifications."""

    id: str
    kind: ItemKind
    label: str
    tokens: int
    pinned: bool = False
    view: ItemView = "whole"


class SemanticStatus(Wire):
    """Semantic search of the archive (the ``contextls[semantic]`` extra), and its backlog."""

    available: bool
    indexed: int = 0
    """Archived items of this workspace with vectors."""
    pending: int = 0
    """Archived items waiting to be embedded (in the background, when the server is idle)."""
    model: str = ""
    reason: str = ""
    """Why it is unavailable (e.g. the extra is not installed); empty when available."""
    window_pending: int = 0
    """Items in the window waiting to be embedded (they are embedded before they leave it)."""


class Status(Wire):
    """The truncation status of one workspace window (pushed after every change)."""

    workspace: str
    revision: int
    item_count: int
    max_items: int
    tokens: int
    max_tokens: int
    percent: float
    pinned_count: int
    stale_count: int
    archived_count: int
    evicted_total: int
    encoding: Encoding
    eviction_policy: EvictionPolicy
    model: str = ""
    """The model the window counts for (``tokens``, ``budget`` and every item's count are
    in its tokens), e.g. ``claude-opus-4.7``; clients show it beside the budget."""
    count_exact: bool = True
    """False: the model's counts are an estimate (``countLabel`` says how good)."""
    count_label: str = "exact"
    """``exact``, or the estimate and its measured error, in words a person reads."""
    last_evicted: list[ItemSummary] = []
    next_eviction: ItemSummary | None = None
    archive_bytes: int = 0
    """Bytes of text in the archive."""
    pruned_total: int = 0
    """Archived items pruned by the retention settings, ever."""
    last_pruned: Pruned | None = None
    semantic: SemanticStatus | None = None
    """Semantic search of this workspace; only the ``contextls/status`` answer carries it
    (pushes stay cheap: counting the backlog reads the database)."""
    budget: int = 0
    """The effective token budget: ``maxTokens`` under the ``fixed`` policy, the adaptive
    budget under ``adaptive``. Clients show this one."""
    budget_policy: BudgetPolicy = "fixed"
    task: Task = "general"
    complexity: float = 0.0
    """How demanding the recent items are (0..1), from which the adaptive budget follows."""
    warnings: list[str] = []
    """What the person should know about the window now: items whose text seems to hold
    a secret (said when added, or when a followed file or buffer took one in)."""
    outlined_count: int = 0
    """Items shown as their outlines (the rest are whole, or maps)."""
    map_count: int = 0
    """Maps of the repository."""
    cache: CacheEstimate | None = None
    """What a model's prompt cache keeps of the window's markdown render (None: not
    rendered yet in this server)."""


class CacheEstimate(Wire):
    """How much of the last render a prompt cache could keep, and what the next costs."""

    kept: float
    """The share (0..1) of the render before the last one that the last one kept as a
    byte-identical prefix."""
    next_uncached: int
    """Tokens the next render would send past what the last one shares with it: what a
    provider bills as uncached input, estimated from what changed since."""


class Pruned(Wire):
    """What the last prune took out of the archive, and why."""

    count: int
    bytes: int
    at: int
    why: str


# --------------------------------------------------------------------------
# Notifications (server -> client)
# --------------------------------------------------------------------------

EvictionReason = Literal["maxItems", "maxTokens", "budget"]
"""``budget``: the adaptive budget shrank."""


class DidEvictParams(Wire):
    workspace: str
    items: list[ContextItem]
    reason: EvictionReason


class RefusedFolder(Wire):
    """A folder a client gave that cannot be a workspace folder, and why."""

    folder: str
    reason: str


class SecretFound(Wire):
    """An item whose text seems to hold a secret (the secret itself never shown)."""

    item: str
    """The item's id."""
    where: str
    """What the person knows the item by: its path, or its label."""
    found: str
    """What it seems to hold, in words: "a private key", "an AWS access key"."""


class DidWarnParams(Wire):
    """Something the person should know, as data (``contextls/didWarn``).

    Sent to a client that declares ``experimental: {"contextls": {"didWarn": true}}`` in
    ``initialize``; any other client hears ``message`` as ``window/showMessage``. At most one
    of ``secret`` and ``folder`` is set; a client builds its own words from them, and shows
    ``message`` for a warning it has no words of its own for.
    """

    message: str
    workspace: str | None = None
    """The workspace's folder uri, when the warning is about one window."""
    secret: SecretFound | None = None
    folder: RefusedFolder | None = None
    """A workspace folder this client gave that the server will not serve."""
