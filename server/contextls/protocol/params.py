"""What each request takes, and the settings a window may be given."""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec
from msgspec import Meta

from contextls.protocol.wire import (
    BudgetPolicy,
    Encoding,
    EvictionPolicy,
    IdList,
    ItemId,
    ItemKind,
    Metadata,
    ModelName,
    PositiveLimit,
    Range,
    RenderFormat,
    SearchMode,
    Task,
    Wire,
)

__all__ = [
    "ARCHIVE_MAX_ITEMS_DEFAULT",
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "AddFileParams",
    "AddFilesParams",
    "AddParams",
    "AddRegionParams",
    "AddSymbolParams",
    "AddTextParams",
    "ArchiveMaxAgeDays",
    "ArchiveMaxBytes",
    "ArchiveMaxItems",
    "BudgetCeiling",
    "ClearParams",
    "Compaction",
    "ConfigureParams",
    "CountTokensParams",
    "ExportDocument",
    "ExportItem",
    "ExportParams",
    "FileTarget",
    "ForgetParams",
    "ImportParams",
    "ListParams",
    "MapTokens",
    "MaxFileBytes",
    "MaxItems",
    "MaxTokens",
    "PinParams",
    "RefreshParams",
    "RemoveParams",
    "RenderParams",
    "RestoreParams",
    "SearchParams",
    "ServerInfoParams",
    "StatusParams",
    "WindowSettingName",
    "WindowSettings",
    "WindowSettingsChange",
    "WorkspaceParams",
]

# --------------------------------------------------------------------------
# Request parameters
# --------------------------------------------------------------------------


ProgressToken = Annotated[str, Meta(max_length=200)] | int
"""LSP's ``ProgressToken``: what a client names the ``$/progress`` of a request by."""


class Params(Wire, forbid_unknown_fields=True):
    """Base of what a request takes: a field the request does not know is refused, naming
    it (``addText {"pinned": true}`` would otherwise add an unpinned item in silence)."""


class WorkspaceParams(Params):
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
    outline: bool = False
    """Add it as its outline: signatures and the first line of each docstring, no bodies."""


class AddSymbolParams(AddRegionParams, kw_only=True):
    name: Annotated[str, Meta(min_length=1)]
    symbol_kind: str | int | None = None


class AddTextParams(AddParams, kw_only=True):
    content: str
    kind: ItemKind = "text"


class FileTarget(Params):
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
    outline: bool = False
    """Add each whole file as its outline (a file with nothing to hide is added whole)."""
    work_done_token: ProgressToken | None = None
    """LSP's: the server reports the reading of the files with ``$/progress`` under it."""


class RemoveParams(WorkspaceParams, kw_only=True):
    ids: IdList


class PinParams(WorkspaceParams, kw_only=True):
    id: ItemId
    pin: bool = True
    """False unpins (the same word as the adds' ``pin``)."""


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
    models: Annotated[list[ModelName], Meta(max_length=20)] | None = None
    """Count in each of these models' tokens (``counts`` answers); ``tokens`` is the first's.
    Neither this nor ``encoding``: the workspace's model."""
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
    paths: Annotated[list[Annotated[str, Meta(min_length=1)]], Meta(max_length=10_000)] | None = (
        None
    )
    """Every item (window or archive) from these files: workspace-relative, absolute paths
    or file URIs; a file that is gone still names its items."""
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
Compaction = Literal["outline", "off"]
MapTokens = Annotated[int, Meta(ge=64, le=1_000_000)]
RenderOrder = Literal["stable", "chronological"]
WindowSettingName = Literal[
    "maxItems",
    "maxTokens",
    "model",
    "encoding",
    "evictionPolicy",
    "maxFileBytes",
    "archiveMaxItems",
    "archiveMaxBytes",
    "archiveMaxAgeDays",
    "budgetPolicy",
    "task",
    "budgetCeiling",
    "compaction",
    "mapTokens",
    "renderOrder",
]
ARCHIVE_MAX_ITEMS_DEFAULT: Final = 10_000
"""Archived items kept per workspace. At the ~1-2 KB an archived item takes here,
10,000 are 10-20 MB of database, searched in a few milliseconds (a search stays
under 10 ms at 100,000); a year of steady use (~30 evictions a working day) fits."""


class WindowSettings(Wire):
    """The settings of one workspace window, stored with it (every client sees the same)."""

    max_items: MaxItems = 50
    max_tokens: MaxTokens = 8000
    model: ModelName = ""
    """The model the window is for: the budget and every count are in its tokens. Setting
    it sets ``encoding`` to its tokenizer; setting ``encoding`` alone clears it."""
    encoding: Encoding = "o200k_base"
    """The tokenizer counts are in (the low-level knob under ``model``)."""
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
    compaction: Compaction = "off"
    """``outline``: when an add needs room, the oldest unpinned files are shown as their
    outlines (signatures, no bodies) before anything is evicted; ``off``: evict."""
    map_tokens: MapTokens = 1024
    """The share of the budget a repository map takes; it never takes more."""
    render_order: RenderOrder = "stable"
    """``stable``: what changes least comes first, so a model's prompt cache keeps the most
    of each render (pinned items, then the others in the order they last changed), and
    room is made in batches (the window evicts down to 80 % of its budget, so the next
    adds change only the end); ``chronological``: items in the order they were added,
    each eviction only what the add needs."""


class WindowSettingsChange(Params):
    """The window settings to change; a key left out (or null) keeps its value."""

    max_items: MaxItems | None = None
    max_tokens: MaxTokens | None = None
    model: ModelName | None = None
    encoding: Encoding | None = None
    eviction_policy: EvictionPolicy | None = None
    max_file_bytes: MaxFileBytes | None = None
    archive_max_items: ArchiveMaxItems | None = None
    archive_max_bytes: ArchiveMaxBytes | None = None
    archive_max_age_days: ArchiveMaxAgeDays | None = None
    budget_policy: BudgetPolicy | None = None
    task: Task | None = None
    budget_ceiling: BudgetCeiling | None = None
    compaction: Compaction | None = None
    map_tokens: MapTokens | None = None
    render_order: RenderOrder | None = None


class ConfigureParams(WorkspaceParams, kw_only=True):
    """Change a window's settings. The server decides: a change the pinned items
    cannot live with is refused (NO_ROOM) and nothing changes. With no keys it
    only reads the settings."""

    settings: WindowSettingsChange = msgspec.field(default_factory=WindowSettingsChange)
    reset: list[WindowSettingName] = []
    """Keys to bring back to their defaults."""
    dry_run: bool = False
    """Answer with what the change would do (``evicted``), and change nothing: an editor
    asks before a setting evicts, as it does before a bulk add."""
    force: bool = False
    """Make a change that evicts more than half of the window (its items or its tokens).
    Without it such a change is refused and nothing changes (NEEDS_FORCE, whose ``data``
    is the planned ``ConfigureResult``): a typo such as ``maxTokens 10`` does not empty
    the window unasked."""


class ExportItem(Wire):
    """An item as exported: its path is relative to the workspace (no absolute URI)."""

    id: Annotated[str, Meta(min_length=1, max_length=64)]
    kind: ItemKind
    content: str
    metadata: Metadata = {}
    """At most 64 KiB as JSON (an import refuses more)."""
    timestamp: int = 0
    pinned: bool = False
    archived_at: int | None = None
    reason: Annotated[str, Meta(max_length=200)] | None = None


EXPORT_FORMAT: Final = "contextls-export"
EXPORT_VERSION: Final = 1


class ExportDocument(Wire):
    """A window (and its archive) as one JSON document, for another machine or person."""

    format: str
    """``contextls-export``: required, so a JSON file of anything else is refused by name."""
    version: int
    exported_at: int = 0
    workspace: str = ""
    """The name of the folder it was exported from (for the reader; imports re-root
    paths). Only its name: a document holds no absolute path of the machine it left."""
    settings: WindowSettings = msgspec.field(default_factory=WindowSettings)
    window: list[ExportItem] = []
    archive: list[ExportItem] = []
