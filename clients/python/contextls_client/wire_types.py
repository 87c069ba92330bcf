# ruff: noqa: E501
"""The results the CLI's quick path reads, as plain classes (standard library only).

Generated from server/contextls/protocol/ by ``python -m contextls.protocol.schema``; do
not edit by hand (``--check`` fails when it is stale).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _each(kind: Any, values: list[Any]) -> list[Any]:
    return [kind(value) for value in values]


def _maybe(kind: Any, value: Any) -> Any:
    return None if value is None else kind(value)


class SemanticStatus:
    """Semantic search of the archive (the ``contextls[semantic]`` extra), and its backlog."""

    __slots__ = ('available', 'indexed', 'model', 'pending', 'reason', 'window_pending')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.available: bool = wire['available']
        self.indexed: int = wire.get('indexed', 0)
        self.pending: int = wire.get('pending', 0)
        self.model: str = wire.get('model', '')
        self.reason: str = wire.get('reason', '')
        self.window_pending: int = wire.get('windowPending', 0)


class ModelChoice:
    """A model a window can count for (``ServerInfo.models``): what an editor offers to"""

    __slots__ = ('encoding', 'exact', 'label', 'name', 'unavailable')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.name: str = wire['name']
        self.encoding: str = wire['encoding']
        self.exact: bool = wire['exact']
        self.label: str = wire['label']
        self.unavailable: str = wire.get('unavailable', '')


class ServerInfo:
    """The process serving a client: ``contextls daemon status`` shows it."""

    __slots__ = ('build', 'daemon', 'executable', 'idle_timeout', 'log', 'models', 'pid', 'semantic', 'sessions', 'socket', 'started_at', 'storage', 'version', 'workspaces')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.version: str = wire['version']
        self.pid: int = wire['pid']
        self.started_at: int = wire['startedAt']
        self.daemon: bool = wire['daemon']
        self.storage: str = wire['storage']
        self.sessions: int = wire['sessions']
        self.workspaces: list[str] = wire['workspaces']
        self.idle_timeout: float | None = wire.get('idleTimeout')
        self.semantic: SemanticStatus | None = _maybe(SemanticStatus, wire.get('semantic'))
        self.socket: str = wire.get('socket', '')
        self.log: str = wire.get('log', '')
        self.executable: str = wire.get('executable', '')
        self.build: str = wire.get('build', '')
        self.models: list[ModelChoice] = _each(ModelChoice, wire.get('models', []))


class ItemSummary:
    """A short reference to an item, for status lines and notifications."""

    __slots__ = ('id', 'kind', 'label', 'pinned', 'tokens', 'view')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.id: str = wire['id']
        self.kind: str = wire['kind']
        self.label: str = wire['label']
        self.tokens: int = wire['tokens']
        self.pinned: bool = wire.get('pinned', False)
        self.view: str = wire.get('view', 'whole')


class Pruned:
    """What the last prune took out of the archive, and why."""

    __slots__ = ('at', 'bytes', 'count', 'why')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.count: int = wire['count']
        self.bytes: int = wire['bytes']
        self.at: int = wire['at']
        self.why: str = wire['why']


class CacheEstimate:
    """How much of the last render a prompt cache could keep, and what the next costs."""

    __slots__ = ('kept', 'next_uncached')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.kept: float = wire['kept']
        self.next_uncached: int = wire['nextUncached']


class Status:
    """The truncation status of one workspace window (pushed after every change)."""

    __slots__ = ('archive_bytes', 'archived_count', 'budget', 'budget_policy', 'cache', 'complexity', 'count_exact', 'count_label', 'encoding', 'evicted_total', 'eviction_policy', 'item_count', 'last_evicted', 'last_pruned', 'map_count', 'max_items', 'max_tokens', 'model', 'next_eviction', 'outlined_count', 'percent', 'pinned_count', 'pruned_total', 'revision', 'semantic', 'stale_count', 'task', 'tokens', 'warnings', 'workspace')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.workspace: str = wire['workspace']
        self.revision: int = wire['revision']
        self.item_count: int = wire['itemCount']
        self.max_items: int = wire['maxItems']
        self.tokens: int = wire['tokens']
        self.max_tokens: int = wire['maxTokens']
        self.percent: float = wire['percent']
        self.pinned_count: int = wire['pinnedCount']
        self.stale_count: int = wire['staleCount']
        self.archived_count: int = wire['archivedCount']
        self.evicted_total: int = wire['evictedTotal']
        self.encoding: str = wire['encoding']
        self.eviction_policy: str = wire['evictionPolicy']
        self.model: str = wire.get('model', '')
        self.count_exact: bool = wire.get('countExact', True)
        self.count_label: str = wire.get('countLabel', 'exact')
        self.last_evicted: list[ItemSummary] = _each(ItemSummary, wire.get('lastEvicted', []))
        self.next_eviction: ItemSummary | None = _maybe(ItemSummary, wire.get('nextEviction'))
        self.archive_bytes: int = wire.get('archiveBytes', 0)
        self.pruned_total: int = wire.get('prunedTotal', 0)
        self.last_pruned: Pruned | None = _maybe(Pruned, wire.get('lastPruned'))
        self.semantic: SemanticStatus | None = _maybe(SemanticStatus, wire.get('semantic'))
        self.budget: int = wire.get('budget', 0)
        self.budget_policy: str = wire.get('budgetPolicy', 'fixed')
        self.task: str = wire.get('task', 'general')
        self.complexity: float = wire.get('complexity', 0.0)
        self.warnings: list[str] = wire.get('warnings', [])
        self.outlined_count: int = wire.get('outlinedCount', 0)
        self.map_count: int = wire.get('mapCount', 0)
        self.cache: CacheEstimate | None = _maybe(CacheEstimate, wire.get('cache'))


class ContextItem:
    """One piece of marked context."""

    __slots__ = ('content', 'id', 'kind', 'label', 'metadata', 'pinned', 'stale', 'timestamp', 'tokens', 'view')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.id: str = wire['id']
        self.kind: str = wire['kind']
        self.content: str = wire['content']
        self.label: str = wire['label']
        self.timestamp: int = wire['timestamp']
        self.tokens: int = wire['tokens']
        self.metadata: dict[str, Any] = wire.get('metadata', {})
        self.pinned: bool = wire.get('pinned', False)
        self.stale: bool = wire.get('stale', False)
        self.view: str = wire.get('view', 'whole')


class ListResult:
    __slots__ = ('items',)

    def __init__(self, wire: dict[str, Any]) -> None:
        self.items: list[ContextItem] = _each(ContextItem, wire['items'])


class Omission:
    """An item a render left out, and why (``over budget: 1,234 tokens, 310 left``)."""

    __slots__ = ('id', 'reason')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.id: str = wire['id']
        self.reason: str = wire['reason']


class CacheBreakpoint:
    """The end of a part of a render a prompt cache can keep whole."""

    __slots__ = ('after', 'offset', 'tokens', 'utf16_offset')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.after: str = wire['after']
        self.offset: int = wire['offset']
        self.utf16_offset: int = wire['utf16Offset']
        self.tokens: int = wire['tokens']


class RenderResult:
    __slots__ = ('breakpoints', 'budget', 'format', 'history_ids', 'history_omitted', 'history_scores', 'item_ids', 'omitted_ids', 'text', 'tokens', 'warnings')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.text: str = wire['text']
        self.tokens: int = wire['tokens']
        self.item_ids: list[str] = wire['itemIds']
        self.omitted_ids: list[str] = wire['omittedIds']
        self.format: str = wire.get('format', 'markdown')
        self.history_ids: list[str] = wire.get('historyIds', [])
        self.history_scores: list[float] = wire.get('historyScores', [])
        self.warnings: list[str] = wire.get('warnings', [])
        self.history_omitted: list[Omission] = _each(Omission, wire.get('historyOmitted', []))
        self.budget: int = wire.get('budget', 0)
        self.breakpoints: list[CacheBreakpoint] = _each(CacheBreakpoint, wire.get('breakpoints', []))


class PinnedGrowth:
    """A pinned item that grew because the add absorbed it (a pinned region of a file"""

    __slots__ = ('absorbed', 'id', 'label', 'tokens_after', 'tokens_before')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.id: str = wire['id']
        self.label: str = wire['label']
        self.absorbed: list[str] = wire['absorbed']
        self.tokens_before: int = wire['tokensBefore']
        self.tokens_after: int = wire['tokensAfter']


class SkippedFile:
    """A file a folder or glob held that was left out, and why."""

    __slots__ = ('path', 'reason')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.path: str = wire['path']
        self.reason: str = wire['reason']


class TargetRefusal:
    """A target that was refused; the other targets are added all the same."""

    __slots__ = ('code', 'message', 'target')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.target: str = wire['target']
        self.code: int = wire['code']
        self.message: str = wire['message']


class SecretFound:
    """An item whose text seems to hold a secret (the secret itself never shown)."""

    __slots__ = ('found', 'item', 'where')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.item: str = wire['item']
        self.where: str = wire['where']
        self.found: str = wire['found']


class AddFilesResult:
    __slots__ = ('dry_run', 'evicted', 'items', 'merged', 'pinned_growth', 'refused', 'secrets', 'skipped', 'status', 'tokens', 'warnings')

    def __init__(self, wire: dict[str, Any]) -> None:
        self.items: list[ContextItem] = _each(ContextItem, wire['items'])
        self.evicted: list[ContextItem] = _each(ContextItem, wire['evicted'])
        self.tokens: int = wire['tokens']
        self.status: Status = Status(wire['status'])
        self.merged: dict[str, str] = wire.get('merged', {})
        self.pinned_growth: list[PinnedGrowth] = _each(PinnedGrowth, wire.get('pinnedGrowth', []))
        self.skipped: list[SkippedFile] = _each(SkippedFile, wire.get('skipped', []))
        self.refused: list[TargetRefusal] = _each(TargetRefusal, wire.get('refused', []))
        self.warnings: list[str] = wire.get('warnings', [])
        self.secrets: list[SecretFound] = _each(SecretFound, wire.get('secrets', []))
        self.dry_run: bool = wire.get('dryRun', False)
