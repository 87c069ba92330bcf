"""``--json`` documents of the commands that combine several protocol results.

Single-request commands print the protocol's own result Struct; these wrap
lists of them. Keys are camelCase like the protocol's. Each command prints one
document of one shape whatever it was given (one file or several, one id or
several), or an :class:`ErrorDocument`.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from contextls.protocol import (
    ContextItem,
    ModelCount,
    ServerInfo,
    SkippedFile,
    Status,
    TargetRefusal,
)


class ConfigReport(Struct, rename="camel", kw_only=True):
    """``contextls config --json``: what was chosen for the window, and what is in effect."""

    workspace: str
    storage: str | None
    chosen: dict[str, Any]
    effective: dict[str, Any]
    changed: list[str]
    status: Status


class TokenCount(Struct, rename="camel", kw_only=True):
    source: str
    tokens: int
    """In the first model's tokens."""
    by_model: dict[str, int] = {}
    """Every asked model's count (``--model``), by model name."""


class TokensReport(Struct, rename="camel", kw_only=True):
    """``contextls tokens --json`` with several sources."""

    sources: list[TokenCount]
    total: int
    encoding: str
    model: str = ""
    totals: list[ModelCount] = []
    """Each model's total, exact or an estimate (``label``), in the order asked."""
    skipped: list[SkippedFile] = []
    """Files a folder or glob held that were left out, and why."""
    refused: list[TargetRefusal] = []
    """Sources that could not be counted (the others are)."""


class PinReport(Struct, rename="camel", kw_only=True):
    """``contextls pin|unpin --json``, whatever number of items was named."""

    items: list[ContextItem]
    merged: dict[str, str]
    """Ids named that were merged into another item: named -> that item."""
    evicted: list[ContextItem]
    status: Status


class DaemonReport(Struct, rename="camel", kw_only=True):
    """``contextls daemon [status|start|stop] --json``, running or not."""

    running: bool
    storage: str
    socket: str
    log: str
    pid: int | None = None
    """The daemon's process (the one stopped, for ``stop``)."""
    stopped: bool = False
    server: ServerInfo | None = None
    """What the running daemon says of itself."""


class BulkRefusal(Struct, rename="camel", kw_only=True):
    """``data`` of the error document of an add or a count of which nothing got through."""

    refused: list[TargetRefusal]
    skipped: list[SkippedFile] = []


class ErrorReport(Struct, kw_only=True):
    code: int
    message: str
    data: Any = None
    """What the refusal is about, as data (the server's ``data``; a bulk add's refusals)."""


class ErrorDocument(Struct, kw_only=True):
    """What ``--json`` prints on stdout when a request is refused."""

    error: ErrorReport
