"""The map of the repository as an item: ranked definitions of the workspace, fitted
to the window's ``mapTokens`` (or the tokens asked for), never over; live: it is ranked
again when the window's items or the workspace's files change, at most every
``MAP_FOLLOW_SECONDS``, and says what the last ranking cost (``metadata.rankMs``)."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Final

from contextls.app.changes import Change
from contextls.app.symbol_adding import QUALIFIED_NAME, SymbolAdding
from contextls.app.views import Viewing
from contextls.core import candidates
from contextls.core.errors import ContextError
from contextls.core.items import Item
from contextls.core.outlines import VIEW, view_of
from contextls.protocol import AddResult, ErrorCode
from contextls.structure.repomap import fit, rank
from contextls.structure.tags import FileFacts

MAP_FOLLOW_SECONDS: Final = 2.0
"""How often, at most, a live map looks at the workspace's files again."""
TITLE: Final = "map of the repository"


class Mapping(SymbolAdding, Viewing):
    _map_seen: tuple[int, float] = (-1, 0.0)
    """(the window's revision, the time) of the map's last ranking."""

    def add_map(
        self,
        query: str | None = None,
        tokens: int | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
    ) -> AddResult:
        """Add the map (or rank the window's map again, with these wishes)."""
        share = tokens or self.settings.map_tokens
        wishes = {**(metadata or {}), "title": TITLE, VIEW: "map", "mapTokens": share}
        if query:
            wishes["query"] = query
        existing = self._map_item()
        if existing is not None:
            self.remove_quietly(existing)
        shape = Item(f"ctx-{self.window.next_id}", "custom", "", wishes, 0, 0, pinned=pin)
        content, shown, spent = self._map_text(query, share, shape)
        wishes.update({"definitions": shown, "rankMs": spent})
        return self.add_candidate(candidates.text("custom", content, None, wishes, pin))

    def follow_files(self) -> None:
        super().follow_files()
        item = self._map_item()
        if item is None:
            return
        seen_revision, seen_at = self._map_seen
        if self.revision == seen_revision and time.monotonic() - seen_at < MAP_FOLLOW_SECONDS:
            return
        share = item.metadata.get("mapTokens", self.settings.map_tokens)
        query = item.metadata.get("query")
        asked = query if isinstance(query, str) else None
        content, shown, spent = self._map_text(asked, share, item)
        if content == item.content:
            self._map_seen = (self.revision, time.monotonic())
            return

        def apply(change: Change) -> None:
            if item.id not in self.window:
                return
            change.touch(item)
            change.record_evictions(self.window.replace_content(item.id, content))
            item.metadata = {**item.metadata, "definitions": shown, "rankMs": spent}

        self.change(apply)
        self._map_seen = (self.revision, time.monotonic())

    def remove_quietly(self, item: Item) -> None:
        """Take the old map out (its replacement is added next)."""

        def apply(change: Change) -> None:
            change.touch(item)
            self.window.remove([item.id])

        self.change(apply)

    def _map_item(self) -> Item | None:
        return next((item for item in self.window if view_of(item) == "map"), None)

    def _map_text(self, query: str | None, share: int, shape: Item) -> tuple[str, int, int]:
        """The map's text, how many definitions it shows, and what ranking cost (ms).
        ``shape``: the item it goes in; the share holds what the item takes in the window,
        its heading and fences too."""
        started = time.perf_counter()
        files: dict[str, FileFacts] = dict(self.code.all_facts(self.settings.max_file_bytes))
        if not files:
            raise ContextError(
                "the workspace holds no file whose structure contextls knows (Python, "
                "JavaScript, TypeScript, Go, Rust, Java, C, C++, Emacs Lisp): no map to make",
                ErrorCode.NO_STRUCTURE,
            )
        focus_files, focus_names, leave_out = self._focus()
        ranked = rank(files, focus_files, focus_names, query, leave_out)
        costs = self.window.costs

        def cost(text: str) -> int:
            return costs.of(replace(shape, content=text))  # counted afresh: a new text

        text, shown = fit(ranked, files, cost, share)
        spent = round((time.perf_counter() - started) * 1000)
        self._map_seen = (self.revision, time.monotonic())
        return text or "(no definition fits the map's share)\n", shown, spent

    def _focus(self) -> tuple[set[str], set[str], set[tuple[str, str]]]:
        """The window's files, the names of its symbols, and what not to list again."""
        files: set[str] = set()
        names: set[str] = set()
        leave_out: set[tuple[str, str]] = set()
        for item in self.window:
            path = item.path
            if path is None or view_of(item) == "map":
                continue
            files.add(path)
            qualified = item.metadata.get(QUALIFIED_NAME) or item.metadata.get("symbol")
            if isinstance(qualified, str):
                names.add(qualified.partition("@")[0])
                leave_out.add((path, qualified.partition("@")[0]))
            elif item.is_whole_file:
                leave_out.add((path, ""))
        return files, names, leave_out
