"""``--json`` documents of the commands that combine several protocol results.

Single-request commands print the protocol's own result Struct; these wrap
lists of them. Keys are camelCase like the protocol's.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from contextls.protocol import AddResult, Status


class Refusal(Struct, rename="camel", kw_only=True):
    """A target the server refused, with its error code and message."""

    target: str
    code: int
    message: str


class Skip(Struct, rename="camel", kw_only=True):
    """A file met while expanding a directory or glob and left out."""

    path: str
    reason: str


class AddReport(Struct, rename="camel", kw_only=True):
    """``contextls add --json``."""

    added: list[AddResult]
    refused: list[Refusal]
    skipped: list[Skip]
    status: Status | None


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


class TokensReport(Struct, rename="camel", kw_only=True):
    """``contextls tokens --json`` with several sources."""

    sources: list[TokenCount]
    total: int
    encoding: str


class ErrorReport(Struct, kw_only=True):
    code: int
    message: str


class ErrorDocument(Struct, kw_only=True):
    """What ``--json`` prints on stdout when a request is refused."""

    error: ErrorReport
