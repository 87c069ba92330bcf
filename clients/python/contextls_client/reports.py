"""``--json`` documents of the commands that combine several protocol results.

Single-request commands print the protocol's own result Struct; these wrap
lists of them. Keys are camelCase like the protocol's.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from contextls.protocol import ModelCount, Status


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


class ErrorReport(Struct, kw_only=True):
    code: int
    message: str


class ErrorDocument(Struct, kw_only=True):
    """What ``--json`` prints on stdout when a request is refused."""

    error: ErrorReport
