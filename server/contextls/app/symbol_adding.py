"""Adding a definition by its name, and finding the definition at a place: the server
parses the file (``contextls.structure``), so the command line, agents and editors
without a symbol provider name code the way a person does (``Parser.parse``)."""

from __future__ import annotations

from typing import Any, Final

from contextls.app.adding import Adding
from contextls.app.code_index import CodeIndex
from contextls.core.candidates import Candidate
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


class SymbolAdding(Adding):
    _code: CodeIndex | None = None

    @property
    def code(self) -> CodeIndex:
        if self._code is None:
            self._code = CodeIndex(self.sources)
        return self._code

    def add_named_symbol(
        self,
        name: str,
        uri: str | None,
        language: str | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
        as_outline: bool = False,
    ) -> AddResult:
        symbol, file_uri, rel, text, found = self.find_symbol(name, uri, language)
        if any(
            item.is_whole_file and not is_outlined(item) for item in self.window.items_for_path(rel)
        ):
            # The whole file is context already: refreshed, as a region of it would be. (A
            # file shown as its outline hides the body: the definition is its own item.)
            return self.add_file(file_uri, language, metadata, pin)
        start, end = symbol.lines
        lines = text.split("\n")
        meta = {**(metadata or {}), QUALIFIED_NAME: symbol.display}
        shown = None
        if as_outline:
            shown = outline(text, found, symbol.lines)
            meta["view"] = "outline"
        end_position = (end, 0) if end < len(lines) else (end - 1, len(lines[end - 1]))
        candidate = self.region_candidate(
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
        return self._add(candidate)

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
            path, rel = self.sources.locate(uri)
            source = self.sources.text(uri, path, rel, self.settings.max_file_bytes)
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
        return self.add_region(uri, start, end, text, language, meta, pin, name, kind)

    def add_candidate(self, candidate: Candidate) -> AddResult:
        """Add what a request planned (a file as its outline, say), as any add."""
        return self._add(candidate)

    def find_symbol(
        self, name: str, uri: str | None, language: str | None = None
    ) -> tuple[Symbol, str, str, str, list[Symbol]]:
        """The one definition ``name`` means (in ``uri``, else anywhere in the workspace),
        with its file's URI, path, text and definitions; refused when none or several."""
        if uri is not None:
            path, rel = self.sources.locate(uri)
            text = self.sources.text(uri, path, rel, self.settings.max_file_bytes)
            found = self._symbols(rel, text, language)
            matches = [(uri, rel, text, found, s) for s in resolve(found, name)]
            if not matches:
                close = near(found, name)
                hint = f"; it defines {_names(close)}" if close else ""
                raise ContextError(f"{rel} defines no {name}{hint}", ErrorCode.SYMBOL_NOT_FOUND)
        else:
            matches, close = [], []
            root = self.sources.root
            for rel, facts in self.code.all_facts(self.settings.max_file_bytes):
                hits = resolve(facts.symbols, name)
                if hits:
                    file_uri = (root / rel).as_uri()
                    text = self.sources.text(
                        file_uri, root / rel, rel, self.settings.max_file_bytes
                    )
                    matches += [(file_uri, rel, text, facts.symbols, s) for s in hits]
                elif len(close) < 5:
                    close += [f"{rel}::{n}" for n in near(facts.symbols, name, 2)]
            if not matches:
                hint = f"; the nearest names are {_names(close[:5])}" if close else ""
                raise ContextError(
                    f"no definition named {name} in the workspace{hint}",
                    ErrorCode.SYMBOL_NOT_FOUND,
                )
        if len(matches) > 1:
            infos = [_info(file_uri, rel, s) for file_uri, rel, _, _, s in matches]
            listed = ", ".join(
                f"{i.path}::{i.name} ({i.start_line}-{i.end_line})" for i in infos[:8]
            )
            more = f" and {len(infos) - 8} more" if len(infos) > 8 else ""
            raise ContextError(
                f"{name} names {len(infos)} definitions: {listed}{more}; name one of them",
                ErrorCode.AMBIGUOUS_SYMBOL,
                AmbiguousSymbolData(candidates=infos[:CANDIDATES_SHOWN]),
            )
        file_uri, rel, text, found, symbol = matches[0]
        return symbol, file_uri, rel, text, found

    def symbol_at(
        self, uri: str, line: int, text: str | None = None, language: str | None = None
    ) -> SymbolAtResult:
        """The innermost definition holding 0-based ``line`` of ``uri``."""
        path, rel = self.sources.locate(uri)
        if text is None:
            text = self.sources.text(uri, path, rel, self.settings.max_file_bytes)
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


def _names(names: list[str]) -> str:
    return ", ".join(names)
