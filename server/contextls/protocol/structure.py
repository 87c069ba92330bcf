"""Requests that use what the code says about itself: a symbol by its name, the
symbol at a place, an item shown as its outline or whole, and a map of the repository."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from contextls.protocol.params import AddParams, ProgressToken, WorkspaceParams
from contextls.protocol.status import ContextItem, Status
from contextls.protocol.wire import IdList, Position, Wire

__all__ = [
    "AddMapParams",
    "AddNamedSymbolParams",
    "AmbiguousSymbolData",
    "SetViewParams",
    "SetViewResult",
    "SymbolAtParams",
    "SymbolAtResult",
    "SymbolInfo",
]

SymbolName = Annotated[str, Meta(min_length=1, max_length=1000)]


class AddNamedSymbolParams(AddParams, kw_only=True):
    """Add a definition found by its name, parsed by the server.

    ``name`` is a qualified name (``Parser.parse``; C++'s ``A::b`` too), or the end of
    one (``parse``); ``name@2`` is its second definition in the file. With ``uri`` the
    file is searched, else every file of the workspace the server can parse. No match:
    SYMBOL_NOT_FOUND, naming the nearest names. More than one: AMBIGUOUS_SYMBOL, whose
    ``data`` lists them. A language the server cannot parse: NO_STRUCTURE.
    """

    name: SymbolName
    uri: str | None = None
    outline: bool = False
    """Show a container (a class) as its outline: its members' signatures, no bodies."""


class SymbolAtParams(WorkspaceParams, kw_only=True):
    """The innermost definition that holds ``position``: for an editor with no symbol
    provider of its own."""

    uri: str
    position: Position
    """LSP: 0-based line, UTF-16 character."""
    text: str | None = None
    """The document as the editor has it (unsaved edits); else read from the file."""


class SymbolInfo(Wire):
    """One definition, as the server parsed it."""

    name: str
    """What names it exactly: its qualified name, ``@N`` when the file defines it again."""
    kind: str
    """``function``, ``method``, ``class``, ``struct``, ``interface``, ``enum``…"""
    path: str
    """Relative to the workspace folder."""
    uri: str
    start_line: int
    """1-based, its first line (decorators included)."""
    end_line: int


class SymbolAtResult(Wire):
    symbol: SymbolInfo | None
    language: str | None = None
    """The language the file was parsed as; null when the server cannot parse it."""
    reason: str | None = None
    """Why there is no symbol: the language is not parsed here, or no definition holds
    the position."""


class AmbiguousSymbolData(Wire):
    """``data`` of AMBIGUOUS_SYMBOL: every definition the name may mean."""

    candidates: list[SymbolInfo]


class SetViewParams(WorkspaceParams, kw_only=True):
    """Show items whole again (``contextls expand``) or as their outlines."""

    ids: IdList
    view: Literal["whole", "outline"]


class SetViewResult(Wire):
    items: list[ContextItem]
    """The items whose view changed."""
    evicted: list[ContextItem]
    """What a whole file needed room for."""
    status: Status
    kept_whole: list[ContextItem] = []
    """Items asked to show as their outlines that have nothing to hide (their outline is
    all of them): left whole. A request where that is every item is refused instead
    (``NO_STRUCTURE``)."""


class AddMapParams(AddParams, kw_only=True):
    """Add a map of the workspace's definitions, ranked by how much the code uses them
    (PageRank over definitions and references), personalised to the window's files and
    symbols and to ``query``; no bodies; fitted to ``tokens`` (default: the window's
    ``mapTokens``) and never over it. It re-ranks as the window and the files change."""

    query: Annotated[str, Meta(max_length=1000)] | None = None
    tokens: Annotated[int, Meta(ge=64, le=1_000_000)] | None = None
    work_done_token: ProgressToken | None = None
    """LSP's: the server reports the parsing of the workspace with ``$/progress``."""
