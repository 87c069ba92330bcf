"""Export and import: a window (and its archive) as one document, and its checks.

An exported item carries its path relative to the workspace, never the
absolute URI of the machine it came from; an import re-roots it under the
workspace it goes into. Everything in a document is checked before anything
changes: a format or version this contextls does not read, a path that
would leave the workspace, an item too large, too many items. One bad item
refuses the whole document, with a message naming it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Final

import msgspec

from contextls.app import protocol_views as wire
from contextls.app.changes import Change
from contextls.app.files import check_path_limits
from contextls.app.settings import WINDOW_KEYS, chosen_of
from contextls.app.workspace import Workspace
from contextls.core.candidates import Candidate
from contextls.core.errors import ContextError, InvalidParams
from contextls.core.items import Item
from contextls.protocol import (
    EXPORT_FORMAT,
    EXPORT_VERSION,
    RANGED_KINDS,
    ErrorCode,
    ExportDocument,
    ExportItem,
    ImportResult,
    WindowSettings,
)

CHECKED_PER_STEP: Final = 5_000
MAX_METADATA_BYTES: Final = 64 * 1024
"""Metadata an imported item may carry, as JSON (paths, lines, a symbol: a few hundred)."""
MAX_IMPORTED_ITEMS: Final = 100_000
"""More items than an archive keeps by default ten times over: refused as hostile."""
BATCH: Final = 500
"""Items imported per change (~25 ms of work): each is committed on its own (a 100,000-item
import in one change held the write lock, and every other client's requests, for 4 s)."""


def export(workspace: Workspace, archive: bool) -> ExportDocument:
    """The window (and its archive) as one document, with paths relative to the root."""
    archived = workspace.store.archive.archive_rows(workspace.root_uri) if archive else []
    return ExportDocument(
        format=EXPORT_FORMAT,
        version=EXPORT_VERSION,
        exported_at=workspace.clock(),
        workspace=workspace.sources.root.name,
        settings=workspace.settings,
        window=[exported(item) for item in workspace.window],
        archive=[exported(item, at, reason) for item, at, reason in archived],
    )


def import_all(workspace: Workspace, document: ExportDocument, dry_run: bool) -> ImportResult:
    """Merge an exported document, all of it at once (the LSP handler commits between
    steps instead, see ``Importing``)."""
    importing = Importing(workspace, document)
    if dry_run:
        return importing.planned()
    while importing.step():
        pass
    return importing.result()


class Importing:
    """An import into one workspace, done as a series of bounded changes.

    Everything in the document is checked before the first change: a refusal changes
    nothing. Then the window items come in (the window's limits apply, evictions are
    announced), then the archive items, ``BATCH`` at a time; the caller commits between
    steps (the LSP handler does, and lets other requests run). A window with no settings
    of its own takes the document's first, so a window moved to a fresh folder is as it
    was; if the first step is refused, they are taken back.
    """

    def __init__(
        self, workspace: Workspace, document: ExportDocument, checked: bool = False
    ) -> None:
        """``checked``: ``checking_import`` already ran over ``document``."""
        self.workspace = workspace
        if not checked:
            check_import(document, workspace.sources.root, workspace.settings.max_file_bytes)
        self.window_items, self.archive_items = document.window, document.archive
        wanted = {} if workspace.chosen else chosen_of(document.settings, WINDOW_KEYS)
        defaults = chosen_of(WindowSettings(), WINDOW_KEYS)
        self.adopted = {key: value for key, value in wanted.items() if defaults[key] != value}
        self.mapping: dict[str, str] = {}
        self.evicted: list[Item] = []
        self._queue = [*self.window_items, *self.archive_items]
        self._done = 0
        self._started = False

    @property
    def total(self) -> int:
        return len(self._queue)

    @property
    def done(self) -> int:
        return self._done

    def planned(self) -> ImportResult:
        """What a dry run says: the ids the items would get."""
        next_id = self.workspace.window.next_id
        mapping = {item.id: f"ctx-{next_id + n}" for n, item in enumerate(self._queue)}
        return ImportResult(
            mapping=mapping,
            added=[mapping[item.id] for item in self.window_items],
            archived=[mapping[item.id] for item in self.archive_items],
            evicted=[],
            status=self.workspace.status(),
            dry_run=True,
            settings=self.adopted,
        )

    def counted(self) -> dict[str, int]:
        """Every item's text counted as its step will count it (a window item's body as
        the window counts it), for the steps to look up (``Tokenizer.consulting``): counted
        in a worker thread, an import of 2,500 items held every client up to ~0.4 s a step
        when each step counted its own. Thread-safe."""
        in_window = {item.id for item in self.window_items}
        tokenizer, adding = self.workspace.tokenizer, self.workspace.adding
        counted: dict[str, int] = {}
        for item in self._queue:
            if item.id in in_window:
                body, tokens, _ = adding.precount(
                    Candidate(item.kind, item.content, dict(item.metadata), item.pinned)
                )
                counted[body] = tokens
            else:
                counted[item.content] = tokenizer.count(item.content)
        return counted

    def step(self) -> bool:
        """Import the next batch as one change; False when nothing is left."""
        first, self._started = not self._started, True
        if first and self.adopted:
            self.workspace.config.configure(self.adopted)
        if self._done >= len(self._queue):
            return False
        batch = self._queue[self._done : self._done + BATCH]
        try:
            self.workspace.change(lambda change: self._apply(change, batch))
        except BaseException:
            if first and self.adopted:
                self.workspace.config.configure({}, reset=list(self.adopted))
            raise
        self._done += len(batch)
        return self._done < len(self._queue)

    def _apply(self, change: Change, batch: list[ExportItem]) -> None:
        workspace = self.workspace
        window, tokenizer = workspace.window, workspace.tokenizer
        in_window = {item.id for item in self.window_items}
        for item in batch:
            if item.id in in_window:
                outcome = window.add(
                    Candidate(item.kind, item.content, dict(item.metadata), item.pinned)
                )
                change.record(outcome)
                self.mapping[item.id] = outcome.item.id
                path = outcome.item.path
                if path is not None:  # its file decides whether it is stale: looked at next
                    workspace.dirty.add(path)
                continue
            new = Item(
                id=window.new_id(),
                kind=item.kind,
                content=item.content,
                metadata=dict(item.metadata),
                timestamp=item.timestamp,
                tokens=0,
                pinned=item.pinned,
                encoding=tokenizer.encoding,
            )
            copies = workspace.store.archive.archived_duplicates(workspace.root_uri, new)
            if copies:  # imported before (or archived here): the same text from the same source
                self.mapping[item.id] = copies[0]
                continue
            new.tokens = tokenizer.count(item.content)
            change.archive_delta += workspace.store.archive.add(
                workspace.root_uri, [new], item.reason or "imported", item.archived_at or 0
            )
            self.mapping[item.id] = new.id
        self.evicted.extend(eviction.item for eviction in change.evictions)
        change.mutated = True

    def result(self) -> ImportResult:
        in_window = {item.id for item in self.workspace.window}
        return ImportResult(
            mapping=self.mapping,
            added=[new for new in self.mapping.values() if new in in_window],
            archived=[new for new in self.mapping.values() if new not in in_window],
            evicted=[wire.context_item(i) for i in self.evicted if i.id not in in_window],
            status=self.workspace.status(),
            settings=self.adopted,
        )


def exported(item: Item, archived_at: int | None = None, reason: str | None = None) -> ExportItem:
    metadata = {key: value for key, value in item.metadata.items() if key != "uri"}
    return ExportItem(
        id=item.id,
        kind=item.kind,
        content=item.content,
        metadata=metadata,
        timestamp=item.timestamp,
        pinned=item.pinned,
        archived_at=archived_at,
        reason=reason,
    )


def check_import(
    document: ExportDocument, root: Path, max_bytes: int
) -> tuple[list[ExportItem], list[ExportItem]]:
    """The document's window and archive items, re-rooted under ``root``; or a refusal."""
    for _ in checking_import(document, root, max_bytes):
        pass
    return document.window, document.archive


def checking_import(document: ExportDocument, root: Path, max_bytes: int) -> Iterator[None]:
    """``check_import`` in steps: it yields after every ``CHECKED_PER_STEP`` items, so a
    server can answer other clients between them (100,000 items take ~0.25 s)."""
    if document.format != EXPORT_FORMAT:
        raise InvalidParams(
            "$.document.format", f"this is not a contextls export ({document.format!r})"
        )
    if document.version != EXPORT_VERSION:
        newer = "a newer" if document.version > EXPORT_VERSION else "an unknown"
        raise InvalidParams(
            "$.document.version",
            f"export version {document.version} is {newer} format; this contextls reads "
            f"version {EXPORT_VERSION}",
        )
    count = len(document.window) + len(document.archive)
    if count > MAX_IMPORTED_ITEMS:
        raise InvalidParams(
            "$.document", f"{count:,} items is more than an import takes ({MAX_IMPORTED_ITEMS:,})"
        )
    seen: set[str] = set()
    for where, items in (("window", document.window), ("archive", document.archive)):
        for index, item in enumerate(items):
            if index % CHECKED_PER_STEP == CHECKED_PER_STEP - 1:
                yield
            field = f"$.document.{where}[{index}]"
            if item.id in seen:
                raise InvalidParams(f"{field}.id", f"{item.id} appears twice in the document")
            seen.add(item.id)
            size = len(item.content.encode())
            if size > max_bytes:
                raise ContextError(
                    f"{item.id} in the document has {size:,} bytes, more than maxFileBytes "
                    f"{max_bytes:,}; nothing was imported",
                    ErrorCode.FILE_TOO_LARGE,
                )
            metadata = len(msgspec.json.encode(item.metadata))
            if metadata > MAX_METADATA_BYTES:
                raise InvalidParams(
                    f"{field}.metadata",
                    f"{item.id} has {metadata:,} bytes of metadata; an item keeps at most "
                    f"{MAX_METADATA_BYTES:,}",
                )
            if not item.content.strip() and item.kind not in RANGED_KINDS:
                # A file (an empty __init__.py) or a region of one may be blank; a note
                # never was (the server refuses to add one).
                raise InvalidParams(f"{field}.content", f"{item.id} is empty")
            _reroot(item, root, field)


def _reroot(item: ExportItem, root: Path, field: str) -> None:
    path = item.metadata.get("path")
    item.metadata.pop("uri", None)
    if path is None:
        return
    if not isinstance(path, str) or not path:
        raise InvalidParams(f"{field}.metadata.path", f"{item.id} has a path that is not text")
    check_path_limits(path, f"{field}.metadata.path")
    relative = PurePosixPath(path)
    if not relative.parts or relative.parts == (".",):
        raise InvalidParams(
            f"{field}.metadata.path", f"{item.id} names the workspace folder itself, not a file"
        )
    outside = relative.is_absolute() or ".." in relative.parts or "\0" in path
    if not outside:
        # Lexically inside is not enough: a folder on the way may be a symlink out.
        try:
            outside = not (root / relative).resolve().is_relative_to(root)
        except (OSError, RuntimeError):
            outside = True
    if outside:
        raise ContextError(
            f"{item.id} in the document points outside the workspace ({_cut(path)}); "
            "nothing was imported",
            ErrorCode.OUTSIDE_WORKSPACE,
        )
    item.metadata["uri"] = (root / relative).as_uri()


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
