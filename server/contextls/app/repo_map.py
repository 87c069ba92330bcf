"""The map of the repository as an item: ranked definitions of the workspace, fitted
to the window's ``mapTokens`` (or the tokens asked for), never over; live: it is ranked
again when the window's items or the workspace's files change, at most every
``MAP_FOLLOW_SECONDS``, and says what the last ranking cost (``metadata.rankMs``).

Making a map is work of seconds on a large repository: the files are parsed and ranked
and fitted to the share in the map's own process (``map_process``), while the event
loop answers everyone else; only the change that puts the map in the window runs on
the loop. A newer map of the same window supersedes one still being made.

A workspace of a git repository has its map prepared as soon as it opens
(``prepare``): the maps' process parses its files then, so the first map asked is a
ranking, not a parse of the repository (``$CONTEXTLS_MAP_PREPARE=off`` waits for the
first map instead)."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from contextls.app.adding import Adding
from contextls.app.changes import Change
from contextls.app.code_index import Progress
from contextls.app.expand import in_git_work_tree
from contextls.app.map_messages import MapRequest, Preparation, Prepared, Version
from contextls.app.map_process import MapProcess
from contextls.app.symbol_adding import QUALIFIED_NAME
from contextls.app.workspace_state import WorkspaceState
from contextls.common.environment import flag
from contextls.core import candidates
from contextls.core.errors import ContextError
from contextls.core.items import VIEW, Item, view_of
from contextls.protocol import AddResult

log = logging.getLogger(__name__)

MAP_FOLLOW_SECONDS: Final = 2.0
"""How often, at most, a live map looks at the workspace's files again."""
TITLE: Final = "map of the repository"
UNMAPPED: Final = "unmappedFiles"
"""The map item's count of the workspace's files it leaves out (over the code a map
holds: ``code_index.mapped_megabytes``); its text says so in its last line too."""
PREPARE_ENV: Final = "CONTEXTLS_MAP_PREPARE"
PREPARE_AFTER: Final = 0.1
"""Seconds after a folder opens before its workspace is made ready (its tokenizer loaded,
its map prepared): the answer to the request that opened it goes first. Not longer: a
map asked meanwhile waits for the preparation, so each second of delay is a second
more for a map asked at once."""


def worth_preparing(folder: Path) -> bool:
    """Whether a workspace folder's map is prepared before it is asked for: in a git
    repository (where people map; a plain folder may be anything), unless
    ``$CONTEXTLS_MAP_PREPARE`` says no. (The home folder and ``/`` are no workspace
    folder at all: ``session.unfit_folder``.)"""
    return flag(PREPARE_ENV, default=True) and in_git_work_tree(folder)


class Mapping:
    """The map of the repository as an item of the window, and keeping it live."""

    def __init__(self, state: WorkspaceState, adding: Adding) -> None:
        self.state = state
        self.adding = adding

    _map_seen: tuple[int, float] = (-1, 0.0)
    """(the window's revision, the time) of the map's last ranking."""
    _map_task: asyncio.Task[Any] | None = None
    """The ranking of the live map under way, if any."""
    _ranked: tuple[MapRequest, Version] | None = None
    """The last ranking: what was asked, and the files' version then (the same again is
    the same map)."""
    _asked: asyncio.Task[Any] | None = None
    """The add of a map under way: a newer one supersedes it."""

    async def add_map(
        self,
        maps: MapProcess,
        query: str | None = None,
        tokens: int | None = None,
        metadata: dict[str, Any] | None = None,
        pin: bool = False,
        progress: Progress | None = None,
    ) -> AddResult:
        """Add the map (or rank the window's map again, with these wishes). A newer
        add of a map of this window supersedes this one while it is made: it ends in
        ``asyncio.CancelledError`` (the client is told its request was cancelled)."""
        before, self._asked = self._asked, asyncio.current_task()
        if before is not None and not before.done():
            before.cancel("a newer map of this window superseded it")
        share = tokens or self.state.settings.map_tokens
        wishes = {**(metadata or {}), "title": TITLE, VIEW: "map", "mapTokens": share}
        if query:
            wishes["query"] = query
        shape = Item(f"ctx-{self.state.window.next_id}", "custom", "", wishes, 0, 0, pinned=pin)
        content, shown, spent, unmapped = await self._rank(maps, query, share, shape, progress)
        wishes.update({"definitions": shown, "rankMs": spent, UNMAPPED: unmapped})
        existing = self._map_item()
        # The new map takes the old one's place, in one change: the old goes to the archive
        # (it can be restored), and a pin the person set stays with the map.
        pin = pin or (existing is not None and existing.pinned)
        return self.adding.add_candidate(
            candidates.text("custom", content, None, wishes, pin), replacing=existing
        )

    _preparing: asyncio.Task[Prepared] | None = None

    def start_preparing(self, maps: MapProcess) -> None:
        """Prepare this workspace's map in the background (``prepare``)."""
        self._preparing = asyncio.ensure_future(self.prepare(maps))
        self._preparing.add_done_callback(_said)

    async def prepare(self, maps: MapProcess) -> Prepared:
        """Have the maps' process parse this workspace's files now, for its first map."""
        state = self.state
        preparation = Preparation(
            str(state.sources.root), state.settings.max_file_bytes, state.window.costs.encoding
        )
        started = time.perf_counter()
        prepared = await maps.prepare(preparation)
        if prepared.skipped:
            log.info("the map of %s is not prepared: %s", preparation.root, prepared.skipped)
        elif not prepared.already:
            log.info(
                "the map of %s is prepared: %d files (%d read), %d left out (over the code "
                "a map holds), %d that could not be read, in %.1f s",
                preparation.root,
                prepared.files,
                prepared.parsed,
                prepared.unmapped,
                prepared.unread,
                time.perf_counter() - started,
            )
        return prepared

    def map_is_due(self) -> bool:
        """The window holds a map whose ranking is older than the window or than
        ``MAP_FOLLOW_SECONDS`` (the files may have changed), and none is under way."""
        if self._map_item() is None or (self._map_task is not None and not self._map_task.done()):
            return False
        seen_revision, seen_at = self._map_seen
        return not (
            self.state.revision == seen_revision and time.monotonic() - seen_at < MAP_FOLLOW_SECONDS
        )

    def follow_map(self, maps: MapProcess) -> None:
        """Rank the live map again off the loop when it is due (the watch asks)."""
        if self.map_is_due():
            self._map_task = asyncio.ensure_future(self._follow_map(maps))

    async def _follow_map(self, maps: MapProcess) -> None:
        item = self._map_item()
        if item is None:
            return
        share = item.metadata.get("mapTokens", self.state.settings.map_tokens)
        query = item.metadata.get("query")
        asked = query if isinstance(query, str) else None
        try:
            content, shown, spent, unmapped = await self._rank(maps, asked, share, item)
        except ContextError:
            self._map_seen = (self.state.revision, time.monotonic())
            return
        if content == item.content or item.id not in self.state.window:
            self._map_seen = (self.state.revision, time.monotonic())
            return

        def apply(change: Change) -> None:
            if item.id not in self.state.window:
                return
            change.touch(item)
            change.record_evictions(self.state.window.replace_content(item.id, content))
            item.metadata = {
                **item.metadata,
                "definitions": shown,
                "rankMs": spent,
                UNMAPPED: unmapped,
            }

        self.state.change(apply)
        self._map_seen = (self.state.revision, time.monotonic())

    async def _rank(
        self,
        maps: MapProcess,
        query: str | None,
        share: int,
        shape: Item,
        progress: Progress | None = None,
    ) -> tuple[str, int, int, int]:
        """The map's text, how many definitions it shows, the milliseconds it took, and
        how many of the workspace's files it leaves out."""
        started = time.perf_counter()
        focus_files, focus_names, leave_out = self._focus()
        request = MapRequest(
            str(self.state.sources.root),
            self.state.settings.max_file_bytes,
            query,
            share,
            frozenset(focus_files),
            frozenset(focus_names),
            frozenset(leave_out),
            self.state.window.costs.encoding,
        )
        last = self._ranked
        known = last[1] if shape.content and last is not None and last[0] == request else None
        self._map_seen = (self.state.revision, time.monotonic())
        ranking = await maps.rank(request, known, replace(shape, content=""), progress)
        self._map_seen = (self.state.revision, time.monotonic())
        if ranking.unchanged:
            # The live map, and neither what it is asked nor any file changed: the same map.
            meta = shape.metadata
            return shape.content, int(meta.get("definitions", 0)), 0, int(meta.get(UNMAPPED, 0))
        self._ranked = (request, ranking.version)
        spent = round((time.perf_counter() - started) * 1000)
        return ranking.text, ranking.definitions, spent, ranking.unmapped

    def _map_item(self) -> Item | None:
        return next((item for item in self.state.window if view_of(item) == "map"), None)

    def _focus(self) -> tuple[set[str], set[str], set[tuple[str, str]]]:
        """The window's files, the names of its symbols, and what not to list again."""
        files: set[str] = set()
        names: set[str] = set()
        leave_out: set[tuple[str, str]] = set()
        for item in self.state.window:
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


def _said(task: asyncio.Task[Prepared]) -> None:
    if not task.cancelled() and task.exception() is not None:
        # Work ahead, not asked for: the first map says what is wrong, if it still is.
        log.info("a map could not be prepared: %s", task.exception())
