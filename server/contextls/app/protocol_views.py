"""Domain objects -> protocol Structs (the only place that knows both)."""

from __future__ import annotations

from dataclasses import replace

from contextls.core import adaptive
from contextls.core.items import Item, view_of
from contextls.core.models import TOKENIZERS, model_of
from contextls.core.window import Window
from contextls.protocol import (
    CacheEstimate,
    ContextItem,
    ItemSummary,
    Pruned,
    Status,
    WindowSettings,
)
from contextls.storage.store import ArchiveState

EMPTY_STATUS = Status(
    workspace="",
    revision=0,
    item_count=0,
    max_items=0,
    tokens=0,
    max_tokens=0,
    percent=0,
    pinned_count=0,
    stale_count=0,
    archived_count=0,
    evicted_total=0,
    encoding="o200k_base",
    eviction_policy="fifo",
)
"""A result's status before the change is done; the workspace puts the real one in."""


def context_item(item: Item) -> ContextItem:
    return ContextItem(
        id=item.id,
        kind=item.kind,
        content=item.content,
        label=item.label,
        timestamp=item.timestamp,
        tokens=item.tokens,
        metadata=item.metadata,
        pinned=item.pinned,
        stale=item.stale,
        view=view_of(item),
    )


def summary(item: Item) -> ItemSummary:
    return ItemSummary(
        id=item.id,
        kind=item.kind,
        label=item.label,
        tokens=item.tokens,
        pinned=item.pinned,
        view=view_of(item),
    )


def status(
    workspace: str,
    window: Window,
    settings: WindowSettings,
    revision: int,
    archived_count: int,
    evicted_total: int,
    archive: ArchiveState,
    warnings: list[str] | None = None,
    cache: CacheEstimate | None = None,
) -> Status:
    limits = window.limits
    next_item = window.next_eviction()
    budget = limits.max_tokens  # the effective budget: maxTokens, or where adaptive got
    return Status(
        workspace=workspace,
        revision=revision,
        item_count=len(window),
        max_items=limits.max_items,
        tokens=window.total,
        max_tokens=settings.max_tokens,
        percent=round(100 * window.total / budget, 2),
        pinned_count=window.pinned_count,
        stale_count=window.stale_count,
        archived_count=archived_count,
        evicted_total=evicted_total,
        encoding=settings.encoding,
        eviction_policy=limits.policy,
        model=model_of(settings.model, settings.encoding),
        count_exact=TOKENIZERS[settings.encoding].exact,
        count_label=TOKENIZERS[settings.encoding].label,
        # What left and is still out: an item restored since is not "last out".
        last_evicted=[
            summary(counted_now(window, item))
            for item in reversed(window.last_evicted)
            if item.id not in window
        ],
        next_eviction=summary(next_item) if next_item is not None else None,
        archive_bytes=archive.bytes,
        pruned_total=archive.pruned_total,
        last_pruned=pruned(archive),
        budget=budget,
        budget_policy=settings.budget_policy,
        task=settings.task,
        complexity=round(adaptive.complexity(window.recent(adaptive.RECENT)), 3),
        warnings=warnings or [],
        outlined_count=sum(view_of(item) == "outline" for item in window),
        map_count=sum(view_of(item) == "map" for item in window),
        cache=cache,
    )


def pruned(archive: ArchiveState) -> Pruned | None:
    if archive.last_pruned is None:
        return None
    count, size, at, why = archive.last_pruned
    return Pruned(count=count, bytes=size, at=at, why=why)


def counted_now(window: Window, item: Item) -> Item:
    """``item`` in the tokens of the window's model now (what left under another model
    says what it would take if it came back)."""
    if item.encoding == window.encoding:
        return item
    return replace(item, tokens=window.costs.of(replace(item, tokens=0)), encoding=window.encoding)
