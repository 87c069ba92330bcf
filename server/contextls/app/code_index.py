"""The workspace's code as the server parsed it, kept while each file stays the same.

A file is parsed when it is first asked about and again only when its signature
(inode, size, mtime) or the editor's text changed; what a parse found is small
(definitions and the counts of the words that may name them), so a repository of
thousands of files stays in memory. The whole workspace (for its map) is parsed in
worker processes (``gather``), a batch of files at a time, while the event loop
answers other requests; a file the parser could not read within its budget is left
out of the map, with the reason kept until the file changes.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from contextls.app.expand import expand, git_listing, parts_under
from contextls.app.facts_cache import Row, decode
from contextls.app.parse_jobs import Read, Signature, digest, keep_facts, read_files, signature_of
from contextls.app.sources import Gone, Sources
from contextls.app.workers import OverBudget, Workers
from contextls.common.build import build_id
from contextls.common.environment import text
from contextls.core.errors import ContextError
from contextls.protocol import FileTarget
from contextls.structure.languages import Unsupported, language_of
from contextls.structure.tags import FileFacts, facts
from contextls.structure.uses import Uses, begin

Progress = Callable[[int, int], None]
"""Told (files read so far, files to read) after each batch."""

BATCH_FILES: Final = 48
BATCH_BYTES: Final = 1_500_000
"""A batch of files for one job: small enough that a cancelled map stops soon, and that
each answer is unpickled in a few milliseconds."""
MAPPED_MB_ENV: Final = "CONTEXTLS_MAP_MB"
MAPPED_MB: Final = 64.0
"""The most code (megabytes of source) a map keeps the facts of, across the workspaces
the map's process holds, unless ``$CONTEXTLS_MAP_MB`` says otherwise: ~6 bytes of memory
a byte (CPython's ``Lib/``, 31 MB: ~200 MB of facts and graph). A workspace with more is
mapped by the files changed most recently."""
log = logging.getLogger(__name__)

BUDGET_SECONDS: Final = 30.0
BUDGET_PER_MB: Final = 20.0
"""A job's budget: generous (a loaded machine parses ~0.3 MB/s), it stops only what
never ends."""


@functools.cache
def _build() -> str:
    """The code that parses (facts a build found are not taken for another's)."""
    return build_id()


@dataclass(slots=True)
class _Known:
    signature: Signature | None
    """None: parsed from an editor's text, which has no signature on disk."""
    text_hash: bytes
    facts: FileFacts


def mapped_megabytes() -> float:
    """What a map may hold: ``$CONTEXTLS_MAP_MB``, or ``MAPPED_MB`` when it is unset or
    not a positive number (said in the log once per value: a live map asks every 2 s)."""
    value = text(MAPPED_MB_ENV)
    return MAPPED_MB if value is None else _megabytes(value)


@functools.cache
def _megabytes(value: str) -> float:
    try:
        megabytes = float(value)
    except ValueError:
        megabytes = 0.0
    if not 0 < megabytes < float("inf"):
        log.warning(
            "%s=%r is not a positive number: a map holds %g MB", MAPPED_MB_ENV, value, MAPPED_MB
        )
        return MAPPED_MB
    return megabytes


def _sharing_words(found: FileFacts, shared: dict[str, str]) -> FileFacts:
    """``found`` with its words' strings shared with the batch's other files: ``self`` and
    ``return`` are in every file, and one copy per batch is kept rather than one per file
    (Lib/'s facts 90 -> 73 MB)."""
    words = Counter({shared.setdefault(word, word): count for word, count in found.words.items()})
    return replace(found, words=words)


class CodeIndex:
    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self._known: dict[str, _Known] = {}
        self.parsed = 0
        """How many parses were made (a figure for the benchmarks and the map's cost)."""
        self.left_out: dict[str, tuple[Signature | None, str]] = {}
        """Files the map leaves out, with why, until their signature changes (or the
        largest file read does: ``max_bytes``)."""
        self._max_bytes = 0
        """The largest file the last gather read (a file left out as larger may fit now)."""
        self.version = 0
        """Moves whenever what the index knows of a file changes (a map ranked at the same
        version and window revision is still the same map)."""
        self.uses: list[Uses] = []
        """Which definitions each file uses, kept for the next ranking (``repomap``)."""
        self._unsaved: list[Row] = []
        """What the workers parsed during a gather, for the facts cache."""
        self._saving: set[asyncio.Future[None]] = set()
        self.unmapped = 0
        """How many of the workspace's files the last gather left out: over its bytes."""
        self.unread: dict[str, str] = {}
        """The files of the last gather that could not be read, with why."""
        self._listed: tuple[bytes, list[str]] | None = None
        """git's last listing of the workspace, and the files to parse it made."""
        self._refused: dict[str, tuple[bytes, str, Unsupported]] = {}
        """Files whose text the parser refused (brackets nested past its budget), by
        path: the text's digest, its language, and why. Asked again about the same text
        (an editor asking which definition holds the cursor, again and again), the
        answer is the same, without reading every bracket again (~5 ms a 100 KB file)."""

    def code_bytes(self) -> int:
        """The bytes of source whose facts are kept."""
        return sum(known.signature[1] for known in self._known.values() if known.signature)

    def facts_of(self, rel: str, text: str, language: str | None = None) -> FileFacts:
        """What ``text`` (the file ``rel`` now) defines; Unsupported for a language not
        parsed here."""
        lang = language_of(rel, language)
        if lang is None:
            raise Unsupported(f"{rel}: no parser for this kind of file")
        known = self._known.get(rel)
        text_hash = digest(text)
        if known is not None and known.text_hash == text_hash and known.facts.language == lang:
            return known.facts
        refused = self._refused.get(rel)
        if refused is not None and refused[:2] == (text_hash, lang):
            raise refused[2].with_traceback(None)
        try:
            found = facts(text, lang)
        except Unsupported as error:
            self._refused[rel] = (text_hash, lang, error)
            raise
        self._refused.pop(rel, None)
        self.parsed += 1
        self.version += 1
        self._known[rel] = _Known(signature_of(self.sources.root / rel), text_hash, found)
        return found

    def workspace_files(self) -> list[str]:
        """The files of the workspace whose language is parsed here (what a folder add
        of the whole workspace would consider: git's files, no tool folders or secrets)."""
        root = self.sources.root
        # A map lists the workspace at each ranking; the files git lists rarely change,
        # and expanding them again was most of a listing (20 of 26 ms for 1,800 files).
        listing = git_listing(root)
        if listing is not None and self._listed is not None and self._listed[0] == listing:
            return list(self._listed[1])
        expansion = expand([FileTarget(uri=str(root))], root)
        rels = ("/".join(parts_under(planned.path, root)) for planned in expansion.files)
        found = [rel for rel in rels if language_of(rel) is not None]
        self._listed = None if listing is None else (listing, found)
        return list(found)

    def all_facts(self, max_bytes: int) -> Iterator[tuple[str, FileFacts]]:
        """Every parseable file of the workspace with what it defines; a file that
        cannot be read is left out. Unchanged files are not read again."""
        for rel in self.workspace_files():
            known = self._known.get(rel)
            signature = known.signature if known is not None else None
            if known is not None and signature == signature_of(self.sources.root / rel):
                yield rel, known.facts
                continue
            text = self.sources.on_disk(rel, max_bytes)
            if isinstance(text, Gone):
                self._known.pop(rel, None)
                continue
            try:
                yield rel, self.facts_of(rel, text)
            except (Unsupported, ContextError):
                continue

    async def gather(
        self, workers: Workers, max_bytes: int, progress: Progress | None = None
    ) -> dict[str, FileFacts]:
        """Every parseable file of the workspace with what it defines, parsing what
        changed in worker processes, a batch at a time (the event loop answers others
        meanwhile; cancelling stops between batches). Past ``mapped_megabytes`` of source, the
        files changed longest ago are left out (``unmapped`` says how many)."""
        listed = await asyncio.to_thread(self.workspace_files)  # git ls-files
        root = self.sources.root
        signatures = {rel: signature_of(root / rel) for rel in listed}
        rels = _most_recent(listed, signatures, int(mapped_megabytes() * 2**20))
        self.unmapped = len(listed) - len(rels)
        if max_bytes != self._max_bytes:
            self.left_out.clear()
            self._max_bytes = max_bytes
        wanted: list[str] = []
        for rel in rels:
            signature = signatures[rel]
            known = self._known.get(rel)
            if known is not None and known.signature == signature:
                continue
            refused = self.left_out.get(rel)
            if refused is not None and refused[0] == signature:
                continue
            wanted.append(rel)
        total, done = len(wanted), 0
        running: set[asyncio.Task[list[Read]]] = set()
        try:
            for batch in _batches(root, wanted):
                running.add(asyncio.ensure_future(self._read(workers, batch, max_bytes)))
                # One job more than workers: a worker that finishes takes the next at
                # once, not after this loop has read its answer.
                if len(running) <= workers.processes:
                    continue
                finished, running = await asyncio.wait(running, return_when="FIRST_COMPLETED")
                done += self._keep_all(finished, progress, done, total)
            while running:
                finished, running = await asyncio.wait(running, return_when="FIRST_COMPLETED")
                done += self._keep_all(finished, progress, done, total)
        finally:
            for task in running:
                task.cancel()
            self._save_later(workers)
        self.unread = {rel: self.left_out[rel][1] for rel in rels if rel in self.left_out}
        present = set(rels)
        for rel in [rel for rel in self._known if rel not in present]:
            del self._known[rel]
            self.version += 1
        return {rel: self._known[rel].facts for rel in rels if rel in self._known}

    def _save_later(self, workers: Workers) -> None:
        """Have a worker write what the workers parsed to the facts cache, while the
        ranking goes on here (nobody waits for it: a cache not written is parsed again)."""
        rows, self._unsaved = self._unsaved, []
        if not rows:
            return
        budget = BUDGET_SECONDS + BUDGET_PER_MB * sum(len(row[2]) for row in rows) / 1e6
        saving = asyncio.ensure_future(workers.run(budget, keep_facts, rows, _build()))
        self._saving.add(saving)
        saving.add_done_callback(self._saved)

    def _saved(self, saving: asyncio.Future[None]) -> None:
        self._saving.discard(saving)
        if not saving.cancelled() and saving.exception() is not None:
            log.info("the facts cache was not written: %s", saving.exception())

    async def _read(self, workers: Workers, batch: list[str], max_bytes: int) -> list[Read]:
        root = self.sources.root
        size = sum(_size(root / rel) for rel in batch)
        budget = BUDGET_SECONDS + BUDGET_PER_MB * size / 1e6
        try:
            return await workers.run(budget, read_files, str(root), batch, max_bytes, _build())
        except OverBudget as error:
            if len(batch) == 1:
                return [Read(batch[0], signature_of(root / batch[0]), b"", None, str(error))]
        reads: list[Read] = []
        for rel in batch:  # which of them: one by one
            reads.extend(await self._read(workers, [rel], max_bytes))
        return reads

    def _keep_all(
        self,
        finished: set[asyncio.Task[list[Read]]],
        progress: Progress | None,
        done: int,
        total: int,
    ) -> int:
        count = 0
        shared: dict[str, str] = {}
        for task in finished:
            for read in task.result():
                self._keep(read, shared)
                count += 1
        if progress is not None:
            progress(done + count, total)
        return count

    def _keep(self, read: Read, shared: dict[str, str]) -> None:
        self.version += 1
        self.parsed += read.data is not None
        if read.data is None:
            self._known.pop(read.rel, None)
            if read.why not in ("deleted", "no parser"):
                self.left_out[read.rel] = (read.signature, read.why)
            return
        if not read.cached:
            self._unsaved.append((read.text_hash, read.language, read.data))
        self.left_out.pop(read.rel, None)
        found = _sharing_words(decode(read.data), shared)
        self._known[read.rel] = _Known(read.signature, read.text_hash, found)
        # A first map defines each file's names as it comes: the other files are parsed
        # meanwhile, where the ranking would wait for all of them first.
        begin(self.uses, read.rel, found)


def _most_recent(
    rels: list[str], signatures: dict[str, Signature | None], code_bytes: int
) -> list[str]:
    """``rels`` (in their order) if their sizes add up to at most ``code_bytes``; else the
    most recently changed of them that do."""
    sizes = {
        rel: signature[1] if signature is not None else 0 for rel, signature in signatures.items()
    }
    if sum(sizes[rel] for rel in rels) <= code_bytes:
        return rels
    newest = sorted(rels, key=lambda rel: -(signatures[rel] or (0, 0, 0))[2])
    kept: set[str] = set()
    total = 0
    for rel in newest:
        if total + sizes[rel] <= code_bytes:
            kept.add(rel)
            total += sizes[rel]
    return [rel for rel in rels if rel in kept]


def _batches(root: Path, rels: list[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    size = 0
    for rel in rels:
        batch.append(rel)
        size += _size(root / rel)
        if len(batch) >= BATCH_FILES or size >= BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
