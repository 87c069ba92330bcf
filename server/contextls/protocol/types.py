"""The contextls protocol: method names, parameter and result types, error codes.

This module is the single source of truth for the wire format. The JSON Schema
in ``clients/protocol/contextls.schema.json`` is generated from it
(``python -m contextls.protocol.schema``), and the editor clients are checked against
that schema. Field names are camelCase on the wire (``rename="camel"``).

Every request takes an optional ``workspace`` (a folder URI or path). Without
it the server routes by the folder that contains ``uri``, else the only open
folder.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, get_args

import msgspec
from msgspec import Meta, Struct

__all__ = [
    "ARCHIVE_MAX_ITEMS_DEFAULT",
    "ENCODINGS",
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "ITEM_KINDS",
    "RANGED_KINDS",
    "STORAGE_ENV",
    "TASKS",
    "AddFileParams",
    "AddFilesParams",
    "AddFilesResult",
    "AddParams",
    "AddRegionParams",
    "AddResult",
    "AddSymbolParams",
    "AddTextParams",
    "ArchiveMaxAgeDays",
    "ArchiveMaxBytes",
    "ArchiveMaxItems",
    "BudgetCeiling",
    "BudgetPolicy",
    "ClearParams",
    "ClearResult",
    "CondenseSettings",
    "ConfigureParams",
    "ConfigureResult",
    "ContextItem",
    "ConversationMessage",
    "CountTokensParams",
    "CountTokensResult",
    "DidEvictParams",
    "Durability",
    "Encoding",
    "EvictionPolicy",
    "EvictionReason",
    "ExportDocument",
    "ExportItem",
    "ExportParams",
    "FileTarget",
    "FileTokens",
    "ForgetParams",
    "ForgetResult",
    "IdList",
    "ImportParams",
    "ImportResult",
    "ItemId",
    "ItemKind",
    "ItemSummary",
    "ListParams",
    "ListResult",
    "MaxFileBytes",
    "MaxItems",
    "MaxTokens",
    "Metadata",
    "NoRoomData",
    "NonNegative",
    "Omission",
    "PinParams",
    "PinResult",
    "PinnedGrowth",
    "Position",
    "PositiveLimit",
    "PrepareConversationParams",
    "PrepareConversationResult",
    "Pruned",
    "Range",
    "RefreshParams",
    "RefreshResult",
    "RemoveParams",
    "RemoveResult",
    "RenderFormat",
    "RenderParams",
    "RenderResult",
    "RestoreParams",
    "RestoreResult",
    "SearchHit",
    "SearchMode",
    "SearchParams",
    "SearchResult",
    "SemanticStatus",
    "ServerInfo",
    "ServerInfoParams",
    "Settings",
    "SkippedFile",
    "Span",
    "Status",
    "StatusParams",
    "TargetRefusal",
    "Task",
    "WindowSettingName",
    "WindowSettings",
    "WindowSettingsChange",
    "Wire",
    "WorkspaceParams",
]


STORAGE_ENV: Final = "CONTEXTLS_STORAGE"
"""Environment variable naming the database when the settings do not (the CLI, tests)."""


class Wire(Struct, rename="camel", kw_only=True):
    """Base of every wire type: camelCase keys, every field always present."""


# --------------------------------------------------------------------------
# Shared vocabulary
# --------------------------------------------------------------------------

ItemKind = Literal["code", "text", "file", "repl-history", "error", "custom"]
"""What a context item holds. A symbol is ``code`` with ``metadata.symbol``."""

ITEM_KINDS: Final[tuple[str, ...]] = get_args(ItemKind)

RANGED_KINDS: Final[frozenset[str]] = frozenset({"code", "file"})
"""Kinds that can point into a file, and so take part in range dedup."""

Encoding = Literal["o200k_base", "cl100k_base"]
ENCODINGS: Final[tuple[str, ...]] = get_args(Encoding)
EvictionPolicy = Literal["fifo", "relevance"]
Durability = Literal["normal", "full"]
RenderFormat = Literal["markdown", "xml", "json"]
SearchMode = Literal["keyword", "semantic", "hybrid"]
BudgetPolicy = Literal["fixed", "adaptive"]
Task = Literal["general", "coding", "debugging", "research", "complex_analysis"]
TASKS: Final[tuple[str, ...]] = get_args(Task)

NonNegative = Annotated[int, Meta(ge=0)]
PositiveLimit = Annotated[int, Meta(ge=1)]
ItemId = Annotated[str, Meta(pattern=r"^ctx-[0-9]+$", description="An item id, ctx-N")]
IdList = Annotated[list[ItemId], Meta(min_length=1, max_length=10_000)]
Metadata = dict[str, Any]


class Position(Wire):
    """An LSP position: 0-based line and UTF-16 character offset."""

    line: NonNegative
    character: NonNegative


class Range(Wire):
    """An LSP range, end exclusive."""

    start: Position
    end: Position


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


class ItemSummary(Wire):
    """A short reference to an item, for status lines and notifications."""

    id: str
    kind: ItemKind
    label: str
    tokens: int
    pinned: bool = False


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


class Pruned(Wire):
    """What the last prune took out of the archive, and why."""

    count: int
    bytes: int
    at: int
    why: str


# --------------------------------------------------------------------------
# Request parameters
# --------------------------------------------------------------------------


class WorkspaceParams(Wire):
    workspace: str | None = None


class AddParams(WorkspaceParams, kw_only=True):
    """What every add takes: the language, free metadata, and whether to pin."""

    language: str | None = None
    metadata: Metadata | None = None
    pin: bool = False


class AddRegionParams(AddParams, kw_only=True):
    uri: str
    range: Range
    text: str | None = None
    """The region's text as the editor has it (unsaved edits); else read from the file."""


class AddFileParams(AddParams, kw_only=True):
    uri: str


class AddSymbolParams(AddRegionParams, kw_only=True):
    name: Annotated[str, Meta(min_length=1)]
    symbol_kind: str | int | None = None


class AddTextParams(AddParams, kw_only=True):
    content: str
    kind: ItemKind = "text"


class FileTarget(Wire):
    """One target of a bulk add: a file, a region of a file, a folder, or a glob.

    Exactly one of ``uri`` and ``glob``. A folder adds its files (inside git: what
    ``git ls-files -co --exclude-standard`` lists). Folders and globs leave out hidden
    files, tool folders (``node_modules``, ``.venv``…), binary files and files that
    usually hold credentials; a file named by ``uri`` is always tried.
    """

    uri: str | None = None
    """A file or folder: a ``file://`` URI or an absolute path."""
    glob: Annotated[str, Meta(min_length=1, max_length=4096)] | None = None
    """A pattern such as ``src/**/*.py``: relative to the workspace folder, or absolute."""
    range: Range | None = None
    """Only this region of the file (LSP, 0-based, end exclusive)."""


class AddFilesParams(AddParams, kw_only=True):
    """Add many files as one change, planned as a whole.

    The set never evicts its own members. When it does not fit beside the pinned
    items, nothing changes (NO_ROOM, with the figures in ``data``). When making room
    would evict more than half of the window (its items or its tokens), nothing
    changes unless ``force`` (NEEDS_FORCE, whose ``data`` is the planned
    ``AddFilesResult``). ``dryRun`` plans with the same code and changes nothing.
    """

    targets: Annotated[list[FileTarget], Meta(min_length=1, max_length=10_000)]
    force: bool = False
    dry_run: bool = False


class RemoveParams(WorkspaceParams, kw_only=True):
    ids: IdList


class PinParams(WorkspaceParams, kw_only=True):
    id: ItemId
    pinned: bool = True


class ClearParams(WorkspaceParams, kw_only=True):
    keep_pinned: bool = False


class ListParams(WorkspaceParams, kw_only=True):
    kinds: list[ItemKind] | None = None
    limit: PositiveLimit | None = None


class RenderParams(WorkspaceParams, kw_only=True):
    format: RenderFormat = "markdown"
    kinds: list[ItemKind] | None = None
    limit: PositiveLimit | None = None
    max_tokens: PositiveLimit | None = None
    query: Annotated[str, Meta(max_length=10_000)] | None = None
    """Also render the archived items relevant to this ("Relevant history"), as search would."""
    auto_retrieve: bool = False
    """With ``query``: fill the budget left after the window with the archived items
    whose similarity passes a threshold (``historyIds`` and ``historyScores`` say which)."""


class StatusParams(WorkspaceParams, kw_only=True):
    pass


class SearchParams(WorkspaceParams, kw_only=True):
    query: Annotated[str, Meta(min_length=1, max_length=10_000)]
    limit: Annotated[int, Meta(ge=1, le=500)] = 20
    kinds: list[ItemKind] | None = None
    mode: SearchMode | None = None
    """``hybrid`` when semantic search is available, else ``keyword``."""


class RestoreParams(WorkspaceParams, kw_only=True):
    ids: IdList
    pin: bool = False
    dry_run: bool = False
    """Say what the restore would bring back and evict; change nothing."""


class CountTokensParams(WorkspaceParams, kw_only=True):
    text: str = ""
    encoding: Encoding | None = None
    targets: Annotated[list[FileTarget], Meta(max_length=10_000)] | None = None
    """Files, folders or globs of the workspace to count as well, expanded as a bulk add
    expands them (``files`` says what each one takes)."""


class ServerInfoParams(WorkspaceParams, kw_only=True):
    pass


class ForgetParams(WorkspaceParams, kw_only=True):
    """Remove items for good: from the window, the archive, the search index, the file."""

    ids: IdList | None = None
    query: Annotated[str, Meta(min_length=1, max_length=10_000)] | None = None
    """Every item (window or archive) whose text holds all of these words."""
    dry_run: bool = False


class ExportParams(WorkspaceParams, kw_only=True):
    archive: bool = False
    """Include the archive."""


class ImportParams(WorkspaceParams, kw_only=True):
    document: ExportDocument
    dry_run: bool = False


class RefreshParams(WorkspaceParams, kw_only=True):
    ids: IdList | None = None
    """Items to re-read from their files; omitted: every stale item."""


MaxItems = Annotated[int, Meta(ge=1, le=1000)]
MaxTokens = Annotated[int, Meta(ge=1, le=10_000_000)]
MaxFileBytes = Annotated[int, Meta(ge=1)]
ArchiveMaxItems = Annotated[int, Meta(ge=0, description="0: no limit")]
ArchiveMaxBytes = Annotated[int, Meta(ge=0, description="0: no limit")]
ArchiveMaxAgeDays = Annotated[float, Meta(ge=0, description="0: no limit")]
BudgetCeiling = Annotated[int, Meta(ge=0, le=10_000_000, description="0: four times maxTokens")]
WindowSettingName = Literal[
    "maxItems",
    "maxTokens",
    "encoding",
    "evictionPolicy",
    "maxFileBytes",
    "archiveMaxItems",
    "archiveMaxBytes",
    "archiveMaxAgeDays",
    "budgetPolicy",
    "task",
    "budgetCeiling",
]
ARCHIVE_MAX_ITEMS_DEFAULT: Final = 10_000
"""Archived items kept per workspace. At the ~1-2 KB an archived item takes here,
10,000 are 10-20 MB of database, searched in a few milliseconds (a search stays
under 10 ms at 100,000); a year of steady use (~30 evictions a working day) fits."""


class WindowSettings(Wire):
    """The settings of one workspace window, stored with it (every client sees the same)."""

    max_items: MaxItems = 50
    max_tokens: MaxTokens = 8000
    encoding: Encoding = "o200k_base"
    eviction_policy: EvictionPolicy = "fifo"
    max_file_bytes: MaxFileBytes = 1_000_000
    archive_max_items: ArchiveMaxItems = ARCHIVE_MAX_ITEMS_DEFAULT
    """The oldest archived items beyond this many are pruned (when the server is idle)."""
    archive_max_bytes: ArchiveMaxBytes = 0
    """The oldest archived items beyond this many bytes of text are pruned."""
    archive_max_age_days: ArchiveMaxAgeDays = 0
    """Archived items older than this are pruned."""
    budget_policy: BudgetPolicy = "fixed"
    """``fixed``: the budget is ``maxTokens``. ``adaptive``: it follows the work, from half
    to four times ``maxTokens`` (see ``core/adaptive.py``)."""
    task: Task = "general"
    """What the window is for; under ``adaptive`` it scales the budget."""
    budget_ceiling: BudgetCeiling = 0
    """The most the adaptive budget may reach (the model's context minus room for the
    answer); 0: four times ``maxTokens``."""


class WindowSettingsChange(Wire):
    """The window settings to change; a key left out (or null) keeps its value."""

    max_items: MaxItems | None = None
    max_tokens: MaxTokens | None = None
    encoding: Encoding | None = None
    eviction_policy: EvictionPolicy | None = None
    max_file_bytes: MaxFileBytes | None = None
    archive_max_items: ArchiveMaxItems | None = None
    archive_max_bytes: ArchiveMaxBytes | None = None
    archive_max_age_days: ArchiveMaxAgeDays | None = None
    budget_policy: BudgetPolicy | None = None
    task: Task | None = None
    budget_ceiling: BudgetCeiling | None = None


class ConfigureParams(WorkspaceParams, kw_only=True):
    """Change a window's settings. The server decides: a change the pinned items
    cannot live with is refused (NO_ROOM) and nothing changes. With no keys it
    only reads the settings."""

    settings: WindowSettingsChange = msgspec.field(default_factory=WindowSettingsChange)
    reset: list[WindowSettingName] = []
    """Keys to bring back to their defaults."""


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
    """What the person should know: the text seems to hold a secret (never shown)."""


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
    dry_run: bool = False


class NoRoomData(Wire):
    """``data`` of a bulk add refused for NO_ROOM: the figures."""

    tokens: int
    """The tokens the set takes."""
    items: int
    """The items the set would be."""
    available_tokens: int
    """What the budget leaves beside the pinned items."""
    available_items: int
    short_tokens: int
    """By how many tokens it misses (0: it misses by items only)."""
    short_items: int


class ForgetResult(Wire):
    forgotten: list[ItemSummary]
    """Every item removed for good (from the window and the archive)."""
    status: Status
    dry_run: bool = False


class ExportItem(Wire):
    """An item as exported: its path is relative to the workspace (no absolute URI)."""

    id: str
    kind: ItemKind
    content: str
    metadata: Metadata = {}
    timestamp: int = 0
    pinned: bool = False
    archived_at: int | None = None
    reason: str | None = None


EXPORT_FORMAT: Final = "contextls-export"
EXPORT_VERSION: Final = 1


class ExportDocument(Wire):
    """A window (and its archive) as one JSON document, for another machine or person."""

    format: str = EXPORT_FORMAT
    version: int = EXPORT_VERSION
    exported_at: int = 0
    workspace: str = ""
    """The folder it was exported from (for the reader; imports re-root paths)."""
    settings: WindowSettings = msgspec.field(default_factory=WindowSettings)
    window: list[ExportItem] = []
    archive: list[ExportItem] = []


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


class ConfigureResult(Wire):
    settings: WindowSettings
    """The window's settings after the change."""
    chosen: list[WindowSettingName]
    """Keys set for this window (the rest are defaults)."""
    changed: list[WindowSettingName]
    """Keys whose value this request changed."""
    evicted: list[ContextItem]
    status: Status


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
    """Which searches found it (``keyword``, ``semantic``)."""
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


class CountTokensResult(Wire):
    tokens: int
    """Of ``text``, plus every file of ``files``."""
    encoding: Encoding
    files: list[FileTokens] = []
    skipped: list[SkippedFile] = []
    refused: list[TargetRefusal] = []


# --------------------------------------------------------------------------
# Conversation sliding window (Roo Code's truncateConversationIfNeeded)
# --------------------------------------------------------------------------

ConversationMessage = dict[str, Any]
"""``{role, content, ...}``; content is a string or Anthropic-style blocks
(``{"type": "text", "text"}``, ``{"type": "image", "source": {"data"}}``).
Other keys (``ts``, ``isSummary``) are passed back unchanged."""


class PrepareConversationParams(WorkspaceParams, kw_only=True):
    messages: list[ConversationMessage]
    context_window: Annotated[int, Meta(gt=0)]
    total_tokens: NonNegative | None = None
    max_tokens: NonNegative | None = None
    auto_condense_context: bool = False
    auto_condense_context_percent: float = 100
    system_prompt: str = ""
    custom_condensing_prompt: str | None = None
    profile_thresholds: dict[str, float] = {}
    current_profile_id: str = "default"


class PrepareConversationResult(Wire):
    messages: list[ConversationMessage]
    summary: str
    cost: float
    prev_context_tokens: int
    truncated: bool
    removed_count: int
    new_context_tokens: int | None = None
    error: str | None = None
    warnings: list[str] = []


# --------------------------------------------------------------------------
# Settings (initializationOptions, workspace/didChangeConfiguration)
# --------------------------------------------------------------------------


class CondenseSettings(Wire):
    """An OpenAI-compatible chat-completions endpoint used to summarise chats."""

    endpoint: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    prompt: str | None = None
    timeout: Annotated[float, Meta(gt=0, le=600)] = 60.0
    max_tokens: Annotated[int, Meta(gt=0)] | None = None


class Settings(Wire):
    """What a client sends (initializationOptions, didChangeConfiguration).

    The window keys (maxItems … maxFileBytes) are a client's wish for its
    workspace windows: they are written to a window that has none of its own
    yet, and a change sent while running changes the windows (as
    ``contextls/configure`` does). The window keeps them (``WindowSettings``).
    """

    max_items: MaxItems = 50
    max_tokens: MaxTokens = 8000
    encoding: Encoding = "o200k_base"
    eviction_policy: EvictionPolicy = "fifo"
    max_file_bytes: MaxFileBytes = 1_000_000
    archive_max_items: ArchiveMaxItems = ARCHIVE_MAX_ITEMS_DEFAULT
    archive_max_bytes: ArchiveMaxBytes = 0
    archive_max_age_days: ArchiveMaxAgeDays = 0
    budget_policy: BudgetPolicy = "fixed"
    task: Task = "general"
    budget_ceiling: BudgetCeiling = 0
    storage: str | None = None
    """SQLite file path, or ``:memory:``; default is in the user state dir."""
    durability: Durability = "normal"
    """``normal``: a committed change survives the process being killed; ``full``: it
    also survives power loss (SQLite ``synchronous=FULL``, ~0.2 ms more per commit)."""
    condense: CondenseSettings = msgspec.field(default_factory=CondenseSettings)
    allow_any_folder: bool = False
    """Accept system folders (``/etc``, ``/proc``…) and other users' folders as workspace
    folders. Off: every file under such a folder could end up in a model's context."""


# --------------------------------------------------------------------------
# Notifications (server -> client)
# --------------------------------------------------------------------------

EvictionReason = Literal["maxItems", "maxTokens", "budget"]
"""``budget``: the adaptive budget shrank."""


class DidEvictParams(Wire):
    workspace: str
    items: list[ContextItem]
    reason: EvictionReason
