"""The workspace's code as the server parsed it, kept while each file stays the same.

A file is parsed when it is first asked about and again only when its signature
(inode, size, mtime) or the editor's text changed; what a parse found is small
(definitions and the counts of the words that may name them), so a repository of
thousands of files stays in memory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from contextls.app.expand import expand
from contextls.app.sources import Gone, Sources
from contextls.core.errors import ContextError
from contextls.protocol import FileTarget
from contextls.structure.languages import Unsupported, language_of
from contextls.structure.tags import FileFacts, facts

Signature = tuple[int, int, int]


@dataclass(slots=True)
class _Known:
    signature: Signature | None
    """None: parsed from an editor's text, which has no signature on disk."""
    text_hash: int
    facts: FileFacts


class CodeIndex:
    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self._known: dict[str, _Known] = {}
        self.parsed = 0
        """How many parses were made (a figure for the benchmarks and the map's cost)."""

    def facts_of(self, rel: str, text: str, language: str | None = None) -> FileFacts:
        """What ``text`` (the file ``rel`` now) defines; Unsupported for a language not
        parsed here."""
        lang = language_of(rel, language)
        if lang is None:
            raise Unsupported(f"{rel}: no parser for this kind of file")
        known = self._known.get(rel)
        digest = hash(text)
        if known is not None and known.text_hash == digest and known.facts.language == lang:
            return known.facts
        found = facts(text, lang)
        self.parsed += 1
        self._known[rel] = _Known(_signature(self.sources.root / rel), digest, found)
        return found

    def workspace_files(self) -> list[str]:
        """The files of the workspace whose language is parsed here (what a folder add
        of the whole workspace would consider: git's files, no tool folders or secrets)."""
        root = self.sources.root
        expansion = expand([FileTarget(uri=str(root))], root)
        rels = (planned.path.relative_to(root).as_posix() for planned in expansion.files)
        return [rel for rel in rels if language_of(rel) is not None]

    def all_facts(self, max_bytes: int) -> Iterator[tuple[str, FileFacts]]:
        """Every parseable file of the workspace with what it defines; a file that
        cannot be read is left out. Unchanged files are not read again."""
        for rel in self.workspace_files():
            known = self._known.get(rel)
            signature = known.signature if known is not None else None
            if known is not None and signature == _signature(self.sources.root / rel):
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


def _signature(path: Path) -> Signature | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns
