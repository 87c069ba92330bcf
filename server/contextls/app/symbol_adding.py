"""Adding a definition by its name, and finding the definition at a place: the server
parses the file (``contextls.structure``), so the command line, agents and editors
without a symbol provider name code the way a person does (``Parser.parse``)."""

from __future__ import annotations

from typing import Any, Final

from contextls.app import code_index
from contextls.app.adding import Adding
from contextls.app.code_index import CodeIndex
from contextls.app.map_messages import Found
from contextls.app.workspace_state import WorkspaceState
from contextls.core.errors import ContextError
from contextls.core.items import is_outlined
from contextls.core.text import Position
from contextls.protocol import (
    AddResult,
    AmbiguousSymbolData,
    ErrorCode,
    SymbolAtResult,
    SymbolInfo,
)
from contextls.structure.languages import Unsupported, language_of, why_unsupported
from contextls.structure.model import Symbol
from contextls.structure.outline import outline
from contextls.structure.resolve import near, resolve

CANDIDATES_SHOWN: Final = 50
"""How many definitions an ambiguous answer lists (its message names fewer)."""
QUALIFIED_NAME: Final = "qualifiedName"
"""Metadata of a symbol the server found: the name it is found again by when its file
changes (``contextls.core.follow``)."""


class SymbolAdding:
    """Definitions by name: finding them (in the workspace's code index) and adding them."""

    def __init__(self, state: WorkspaceState, adding: Adding) -> None:
        self.state = state
        self.adding = adding

    _code: CodeIndex | None = None

    @property
    def code(self) -> CodeIndex:
        if self._code is None:
            self._code = CodeIndex(self.state.sources)
        return self._code

    def add_named_symbol(
        self,
        name: str,
        uri: str,
        language: str | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
        as_outline: bool = False,
    ) -> AddResult:
        symbol, file_uri, rel, text, found = self.find_symbol(name, uri, language)
        if any(
            item.is_whole_file and not is_outlined(item)
            for item in self.state.window.items_for_path(rel)
        ):
            # The whole file is context already: refreshed, as a region of it would be. (A
            # file shown as its outline hides the body: the definition is its own item.)
            return self.adding.add_file(file_uri, language, metadata, pin)
        start, end = symbol.lines
        lines = text.split("\n")
        meta = {**(metadata or {}), QUALIFIED_NAME: symbol.display}
        shown = None
        if as_outline:
            shown = outline(text, found, symbol.lines)
            meta["view"] = "outline"
        end_position = (end, 0) if end < len(lines) else (end - 1, len(lines[end - 1]))
        candidate = self.adding.region_candidate(
            file_uri,
            (start - 1, 0),
            end_position,
            shown,
            language,
            meta,
            pin,
            symbol=symbol.display,
            symbol_kind=symbol.kind,
        )
        return self.adding.add_candidate(candidate)

    def add_editor_symbol(
        self,
        uri: str,
        start: Position,
        end: Position,
        name: str,
        kind: str | int | None,
        text: str | None = None,
        language: str | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
    ) -> AddResult:
        """A symbol an editor found: when the server parses its file too and a definition
        of that name starts on its first line, the item follows it by its qualified name,
        and so holds the definition as the server finds it again (decorators to its last
        line): with the editor's own span, the first look at the file would call the item
        changed though nothing changed."""
        meta = dict(metadata or {})
        try:
            path, rel = self.state.sources.locate(uri)
            source = self.state.sources.text(uri, path, rel, self.state.settings.max_file_bytes)
            found = self.code.facts_of(rel, source, language).symbols
        except (ContextError, Unsupported):
            found = []
        last = name.replace("::", ".").rpartition(".")[2]
        same = [s for s in found if s.name == last and start[0] + 1 in (s.start_line, s.name_line)]
        if len(same) == 1:
            meta[QUALIFIED_NAME] = same[0].display
            first, final = same[0].lines
            lines = source.split("\n")
            start = (first - 1, 0)
            end = (final, 0) if final < len(lines) else (final - 1, len(lines[final - 1]))
            text = None  # read from what the server follows: the editor's buffer or the file
        return self.adding.add_region(uri, start, end, text, language, meta, pin, name, kind)

    def find_symbol(
        self, name: str, uri: str, language: str | None = None
    ) -> tuple[Symbol, str, str, str, list[Symbol]]:
        """The one definition ``name`` means in ``uri``, with the file's URI, path, text and
        definitions; refused when none or several."""
        path, rel = self.state.sources.locate(uri)
        text = self.state.sources.text(uri, path, rel, self.state.settings.max_file_bytes)
        found = self._symbols(rel, text, language)
        matches = resolve(found, name)
        if not matches:
            close = near(found, name)
            hint = f"; it defines {_names(close)}" if close else ""
            raise ContextError(f"{rel} defines no {name}{hint}", ErrorCode.SYMBOL_NOT_FOUND)
        if len(matches) > 1:
            raise _ambiguous(name, [_info(uri, rel, symbol) for symbol in matches])
        return matches[0], uri, rel, text, found

    def locate_named(self, name: str, found: Found) -> str:
        """The file of the one definition ``name`` means anywhere in the workspace, from
        what the maps' process found (``map_messages.Found``); refused when none or several."""
        root = self.state.sources.root
        if not found.hits:
            raise not_found(name, found)
        if len(found.hits) > 1:
            raise _ambiguous(
                name, [_info((root / rel).as_uri(), rel, symbol) for rel, symbol in found.hits]
            )
        return (root / found.hits[0][0]).as_uri()

    def symbol_at(
        self, uri: str, line: int, text: str | None = None, language: str | None = None
    ) -> SymbolAtResult:
        """The innermost definition holding 0-based ``line`` of ``uri``."""
        path, rel = self.state.sources.locate(uri)
        if text is None:
            text = self.state.sources.text(uri, path, rel, self.state.settings.max_file_bytes)
        lang = language_of(rel, language)
        try:
            found = self._symbols(rel, text, language)
        except ContextError as error:
            return SymbolAtResult(symbol=None, language=None, reason=error.message)
        holding = [s for s in found if s.listed and s.start_line <= line + 1 <= s.end_line]
        if not holding:
            return SymbolAtResult(
                symbol=None, language=lang, reason=f"no definition holds line {line + 1} of {rel}"
            )
        innermost = min(holding, key=lambda s: s.end_line - s.start_line)
        return SymbolAtResult(symbol=_info(uri, rel, innermost), language=lang)

    def _symbols(self, rel: str, text: str, language: str | None) -> list[Symbol]:
        try:
            return self.code.facts_of(rel, text, language).symbols
        except Unsupported as error:
            reason = (
                why_unsupported(rel, language) if language_of(rel, language) is None else str(error)
            )
            raise ContextError(
                f"{reason}; add its lines instead (FILE:START-END)", ErrorCode.NO_STRUCTURE
            ) from error


def _info(uri: str, rel: str, symbol: Symbol) -> SymbolInfo:
    return SymbolInfo(
        name=symbol.display,
        kind=symbol.kind,
        path=rel,
        uri=uri,
        start_line=symbol.start_line,
        end_line=symbol.end_line,
    )


def not_found(name: str, found: Found) -> ContextError:
    """The refusal of a name found nowhere in the workspace: the nearest names, and the
    files not looked in (past the code a map holds)."""
    hint = f"; the nearest names are {_names(found.near)}" if found.near else ""
    if found.unmapped:
        hint += (
            f"; {found.unmapped:,} of its files were not looked in (only the "
            f"{code_index.mapped_megabytes():g} MB of code changed most recently were): "
            f"name its file too (FILE::{name})"
        )
    return ContextError(
        f"no definition named {name} in the workspace{hint}", ErrorCode.SYMBOL_NOT_FOUND
    )


def _ambiguous(name: str, infos: list[SymbolInfo]) -> ContextError:
    listed = ", ".join(f"{i.path}::{i.name} ({i.start_line}-{i.end_line})" for i in infos[:8])
    more = f" and {len(infos) - 8} more" if len(infos) > 8 else ""
    return ContextError(
        f"{name} names {len(infos)} definitions: {listed}{more}; name one of them",
        ErrorCode.AMBIGUOUS_SYMBOL,
        AmbiguousSymbolData(candidates=infos[:CANDIDATES_SHOWN]),
    )


def _names(names: list[str]) -> str:
    return ", ".join(names)
