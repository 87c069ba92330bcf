"""What each request answers."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta

from contextls.protocol.params import (
    WindowSettingName,
    WindowSettings,
)
from contextls.protocol.status import (
    ContextItem,
    ItemSummary,
    SecretFound,
    SemanticStatus,
    Status,
)
from contextls.protocol.wire import (
    Encoding,
    RenderFormat,
    SearchMode,
    Wire,
)

__all__ = [
    "AddFilesResult",
    "AddResult",
    "CacheBreakpoint",
    "ClearResult",
    "ConfigureResult",
    "CountTokensResult",
    "FileTokens",
    "ForgetResult",
    "ImportResult",
    "ListResult",
    "ModelChoice",
    "ModelCount",
    "Omission",
    "PinResult",
    "PinnedGrowth",
    "RefreshResult",
    "RemoveResult",
    "RenderResult",
    "RestoreResult",
    "SearchHit",
    "SearchResult",
    "ServerInfo",
    "SkippedFile",
    "Span",
    "TargetRefusal",
]

# --------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------


class AddResult(Wire):
    item: ContextItem
    evicted: list[ContextItem]
    deduplicated: bool
    status: Status
    merged: list[str] = []
    """Ids of items the new one absorbed (overlapping ranges, whole file)."""
    warnings: list[str] = []
    """What the person should know, in words: the text seems to hold a secret."""
    secrets: list[SecretFound] = []
    """The same secrets as data: one per kind the item's text seems to hold."""
    replaced: list[str] = []
    """Ids of items the new one took the place of (an older map), now in the archive."""


class SkippedFile(Wire):
    """A file a folder or glob held that was left out, and why."""

    path: str
    """Relative to the workspace folder."""
    reason: str


class TargetRefusal(Wire):
    """A target that was refused; the other targets are added all the same."""

    target: str
    """As it was sent (the URI or the glob), or the file's relative path."""
    code: int
    message: str


class PinnedGrowth(Wire):
    """A pinned item that grew because the add absorbed it (a pinned region of a file
    that was added whole): it stays pinned, and takes more of the budget."""

    id: str
    """The item that is pinned now (the whole file)."""
    label: str
    absorbed: list[str]
    tokens_before: int
    tokens_after: int


class AddFilesResult(Wire):
    items: list[ContextItem]
    """The set as it is now in the window, in the order added (refreshed ones included)."""
    evicted: list[ContextItem]
    """What made room; never a member of the set."""
    tokens: int
    """The tokens the set takes."""
    status: Status
    merged: dict[str, str] = {}
    """Items the set absorbed (regions of a file added whole, touching regions): their id
    -> the id of the item that holds their text now."""
    pinned_growth: list[PinnedGrowth] = []
    skipped: list[SkippedFile] = []
    refused: list[TargetRefusal] = []
    warnings: list[str] = []
    """What the person should know, in words: an item's text seems to hold a secret."""
    secrets: list[SecretFound] = []
    """The same secrets as data: one per item and kind."""
    dry_run: bool = False


class ForgetResult(Wire):
    forgotten: list[ItemSummary]
    """Every item removed for good (from the window and the archive)."""
    status: Status
    dry_run: bool = False


class ImportResult(Wire):
    mapping: dict[str, str]
    """Exported id -> the id it has here."""
    added: list[str]
    """Ids now in the window."""
    archived: list[str]
    """Ids now in the archive (exported as archived, or evicted by the import)."""
    evicted: list[ContextItem]
    status: Status
    dry_run: bool = False
    settings: dict[str, Any] = {}
    """The document's settings the window took, having none of its own (camelCase)."""


class RestoreResult(Wire):
    items: list[ContextItem]
    evicted: list[ContextItem]
    status: Status
    dry_run: bool = False
    already_in_window: list[str] = []
    """Ids asked for that are in the window already: nothing to do for them."""
    merged: dict[str, str] = {}
    """Ids asked for that were merged into another item: asked -> that item."""


class RemoveResult(Wire):
    removed: list[str]
    status: Status
    merged: dict[str, str] = {}
    """Ids asked for that were merged into another item: asked -> that item."""


class PinResult(Wire):
    item: ContextItem
    status: Status
    merged: dict[str, str] = {}
    """The id asked for, if it was merged into another item: asked -> that item."""
    evicted: list[ContextItem] = []
    """What made room: a pinned item's heading says so, a token or two more."""


class ClearResult(Wire):
    cleared: int
    cleared_ids: list[str]
    status: Status


class ListResult(Wire):
    items: list[ContextItem]


class RefreshResult(Wire):
    refreshed: list[ContextItem]
    """The items as they are now, read again from their files."""
    evicted: list[ContextItem]
    status: Status
    archived: list[ContextItem] = []
    """The text stale items had, archived under ids of their own (``restore`` brings one
    back): reading a file again never loses what the window held."""


class ModelChoice(Wire):
    """A model a window can count for (``ServerInfo.models``): what an editor offers to
    choose from. Any spelling the server reads may be set; these are the names it shows."""

    name: str
    encoding: Encoding
    exact: bool
    label: str
    """``exact``, or the estimate and its measured error."""
    unavailable: str = ""
    """Why this server cannot count in it (the package to install); empty: it can."""


class ServerInfo(Wire):
    """The process serving a client: ``contextls daemon status`` shows it."""

    version: str
    pid: int
    started_at: int
    """When the process started (ms since the epoch)."""
    daemon: bool
    """One shared daemon (``contextls connect``, the CLI), or a server of one client."""
    storage: str
    """The database it serves."""
    sessions: int
    """Clients connected now."""
    workspaces: list[str]
    """Windows it has loaded."""
    idle_timeout: float | None = None
    """Seconds the daemon waits without clients before it exits."""
    semantic: SemanticStatus | None = None
    """Whether semantic search runs in this process, and why not."""
    socket: str = ""
    """The daemon's socket (empty for a server of one client)."""
    log: str = ""
    """The daemon's log file (empty when it logs to stderr)."""
    executable: str = ""
    """The Python interpreter running it."""
    build: str = ""
    """What identifies the installed code (changes with every install): a client restarts a
    daemon whose build differs from its own."""
    models: list[ModelChoice] = []
    """The models a window can be set to (the ``model`` setting), for a client to offer."""


class ConfigureResult(Wire):
    settings: WindowSettings
    """The window's settings after the change."""
    chosen: list[WindowSettingName]
    """Keys set for this window (the rest are defaults)."""
    changed: list[WindowSettingName]
    """Keys whose value this request changed (would change, in a dry run)."""
    evicted: list[ContextItem]
    status: Status
    dry_run: bool = False
    """Nothing changed: ``settings`` and ``evicted`` say what the change would do."""


class RenderResult(Wire):
    text: str
    tokens: int
    item_ids: list[str]
    omitted_ids: list[str]
    format: RenderFormat = "markdown"
    history_ids: list[str] = []
    """Archived items appended under "Relevant history" (``query``)."""
    history_scores: list[float] = []
    """The retrieval score of each ``historyIds`` entry, in the same order."""
    warnings: list[str] = []
    """What the rendering had to leave out that matters (pinned items over ``maxTokens``)."""
    history_omitted: list[Omission] = []
    """Archived items that were relevant but left out of "Relevant history", and why."""
    budget: int = 0
    """The token budget this answer kept within: ``maxTokens`` when given, else the window's."""
    breakpoints: list[CacheBreakpoint] = []
    """Where the parts of ``text`` that change least end, for a host's prompt-cache
    markers (Anthropic's ``cache_control``): after the pinned items it starts with, after
    all but the newest item, and at its end."""


class CacheBreakpoint(Wire):
    """The end of a part of a render a prompt cache can keep whole."""

    after: Literal["pinned", "settled", "end"]
    """``pinned``: the pinned items the render starts with; ``settled``: every item but
    the newest; ``end``: the whole render."""
    offset: int
    """Characters (Unicode code points) of ``text`` before the breakpoint."""
    utf16_offset: int
    """The same in UTF-16 code units (JavaScript's string indices)."""
    tokens: int
    """The tokens of ``text`` before the breakpoint, in the window's model."""


class Omission(Wire):
    """An item a render left out, and why (``over budget: 1,234 tokens, 310 left``)."""

    id: str
    reason: str


Span = Annotated[list[int], Meta(min_length=2, max_length=2)]
"""``[start, end)``: offsets in Unicode code points (not bytes, not UTF-16 units)."""


class SearchHit(Wire):
    item: ContextItem
    score: float
    snippet: str
    """Plain text around the best match (no markup)."""
    archived_at: int
    reason: str
    modes: list[SearchMode] = []
    """Its evidence: its words (``keyword``), its meaning (``semantic``), or both."""
    highlights: list[Span] = []
    """Where the query's words are in ``snippet`` (stop words never are)."""


class SearchResult(Wire):
    hits: list[SearchHit]
    mode: SearchMode = "keyword"
    """The mode that ran (``keyword`` when semantic search was asked for but is unavailable)."""
    warning: str | None = None
    """Why the answer may be incomplete (semantic search unavailable, items not embedded yet)."""


class FileTokens(Wire):
    path: str
    """Relative to the workspace folder."""
    tokens: int


class ModelCount(Wire):
    """One model's count of what ``contextls/countTokens`` was given."""

    model: str
    encoding: Encoding
    tokens: int
    exact: bool
    label: str
    """``exact``, or the estimate and its measured error."""
    files: list[FileTokens] = []


class CountTokensResult(Wire):
    tokens: int
    """Of ``text``, plus every file of ``files``."""
    encoding: Encoding
    model: str = ""
    exact: bool = True
    label: str = "exact"
    counts: list[ModelCount] = []
    """Each asked model's count, in the order asked (``models``); the first is ``tokens``."""
    files: list[FileTokens] = []
    skipped: list[SkippedFile] = []
    refused: list[TargetRefusal] = []
