"""Adding to a window: a region, a file, a note; each one change."""

from __future__ import annotations

from typing import Any, NamedTuple

from contextls.app import protocol_views as wire
from contextls.app.changes import Change
from contextls.app.files import check_size
from contextls.app.workspace_state import WorkspaceState, _where
from contextls.core import adaptive, candidates
from contextls.core.candidates import Candidate
from contextls.core.errors import (
    InvalidParams,
)
from contextls.core.items import END_COLUMN, START_COLUMN, Item, is_outlined
from contextls.core.secrets import secrets_in, words_of
from contextls.core.text import Position, check_range, display_lines, slice_range
from contextls.core.window import AddOutcome
from contextls.protocol import (
    AddResult,
    ItemKind,
)


def _columns(start: Position, end: Position, source: str | None) -> tuple[int, int] | None:
    """The 1-based columns of a range inside one line that is not the whole line (its label
    names them: 300 characters of a 240,000-character line are not that line); else None."""
    if start[0] != end[0] or end[1] <= start[1]:
        return None
    if start[1] == 0:
        lines = source.splitlines() if source is not None else []
        if start[0] >= len(lines) or end[1] >= len(lines[start[0]].encode("utf-16-le")) // 2:
            return None
    return start[1] + 1, end[1]


class Precounted(NamedTuple):
    """What ``Adding.precount`` found of a text: its body as the window counts it, the
    tokens of that, and the kinds of secret it seems to hold."""

    body: str
    tokens: int
    secrets: list[str]


class Adding:
    """Adding regions, files and texts to the window."""

    def __init__(self, state: WorkspaceState) -> None:
        self.state = state

    def add_region(
        self,
        uri: str,
        start: Position,
        end: Position,
        text: str | None = None,
        language: str | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
        symbol: str | None = None,
        symbol_kind: str | int | None = None,
    ) -> AddResult:
        return self.add_candidate(
            self.region_candidate(
                uri, start, end, text, language, metadata, pin, symbol, symbol_kind
            )
        )

    def region_candidate(
        self,
        uri: str,
        start: Position,
        end: Position,
        text: str | None = None,
        language: str | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
        symbol: str | None = None,
        symbol_kind: str | int | None = None,
    ) -> Candidate:
        """What adding a region means: the region, or its whole file when that is already
        context (refreshed rather than cut). Refused before anything changes."""
        path, rel = self.state.sources.locate(uri)
        check_range(start, end)
        max_bytes = self.state.settings.max_file_bytes
        if text is None:
            # Cut first, so a range the file does not have is refused whatever
            # the window holds.
            source: str | None = self.state.sources.text(uri, path, rel, max_bytes)
            assert source is not None
            piece = slice_range(source, start, end, rel)
            content, lines = piece.content, (piece.start_line, piece.end_line)
        else:
            if not text.strip():
                raise InvalidParams("$.text", "the text is empty")
            check_size(len(text.encode()), rel, max_bytes)
            content, lines = text, display_lines(start, end)
            found = self.state.sources.current(rel, uri, max_bytes)
            source = found if isinstance(found, str) else None
        if any(
            item.is_whole_file and not is_outlined(item)
            for item in self.state.window.items_for_path(rel)
        ):
            # The whole file is already context: refresh it rather than add a piece of it.
            # (A file shown as its outline hides the bodies: a region of it is its own item.)
            return self.file_candidate(uri, language, metadata, pin)
        columns = _columns(start, end, source)
        if columns is not None:
            metadata = {**(metadata or {}), START_COLUMN: columns[0], END_COLUMN: columns[1]}
        return candidates.region(
            content, uri, rel, lines, language, metadata, pin, symbol, symbol_kind, source
        )

    def add_file(
        self,
        uri: str,
        language: str | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
    ) -> AddResult:
        return self.add_candidate(self.file_candidate(uri, language, metadata, pin))

    def file_candidate(
        self,
        uri: str,
        language: str | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
    ) -> Candidate:
        path, rel = self.state.sources.locate(uri)
        content = self.state.sources.text(uri, path, rel, self.state.settings.max_file_bytes)
        return candidates.file(content, uri, rel, language, metadata, pin)

    def add_text(
        self,
        kind: ItemKind,
        content: str,
        language: str | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
    ) -> AddResult:
        size = len(content.encode(errors="surrogatepass"))
        check_size(size, "the text", self.state.settings.max_file_bytes)
        return self.add_candidate(candidates.text(kind, content, language, metadata, pin))

    def precount(self, candidate: Candidate) -> Precounted:
        """Count what ``candidate``'s text will take (the tokenizer remembers it), scan it
        for secrets and count its signs of demanding work (remembered likewise for a large
        text), so the add that follows counts and scans nothing: a large text is counted in
        a worker thread while other requests are answered, the add then runs on the loop.
        Returns what it found, for an add of more than the tokenizer remembers.
        Thread-safe."""
        found = secrets_in(candidate.content)
        adaptive.signs_of(candidate.kind, candidate.content)
        probe = Item(
            "ctx-0",
            candidate.kind,
            candidate.content,
            dict(candidate.metadata),
            0,
            0,
            encoding=self.state.tokenizer.encoding,
        )
        body, tokens = self.state.window.costs.counted_body(probe)
        return Precounted(body, tokens, found)

    def add_candidate(self, candidate: Candidate, replacing: Item | None = None) -> AddResult:
        """Add what a request planned (a file as its outline, say), as any add; in the same
        change, ``replacing`` (an older map) goes to the archive, so a refused add leaves
        it in the window."""

        def apply(change: Change) -> AddOutcome:
            if replacing is not None:
                for taken in self.state.window.remove([replacing.id]):
                    change.to_archive(taken, "replaced")
            outcome = self.state.window.add(
                candidate, grow_to=adaptive.grow_to(self.state.settings)
            )
            change.record(outcome)
            return outcome

        outcome, change = self.state.recorded_change(apply)
        secrets = self.state.note_secrets(outcome.item.id, _where(outcome.item), candidate.content)
        return AddResult(
            item=wire.context_item(outcome.item),
            evicted=self.state.evicted_by(change),
            deduplicated=outcome.deduplicated,
            status=self.state.status(),
            merged=[item.id for item in outcome.absorbed],
            warnings=[words_of(found) for found in secrets],
            secrets=secrets,
            replaced=[replacing.id] if replacing is not None else [],
        )
