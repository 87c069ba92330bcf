"""What a worker process does for the code index: read and parse a batch of files (or
take what a parse of the same text found from the facts cache), and keep what the
workers parsed in the facts cache.

Its own module, importing only what a parse needs: each worker imports it as it starts
(the first map waits for that), not the index's event loop, listing and graph.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from contextls.app.facts_cache import FactsCache, Row, cache_path, encode
from contextls.app.sources import Gone, Sources
from contextls.core.errors import ContextError
from contextls.protocol import ErrorCode
from contextls.structure.budget import MAX_NESTING, TooDeep
from contextls.structure.languages import Unsupported, language_of
from contextls.structure.tags import facts

Signature = tuple[int, int, int]
"""A file on disk as it is now: (inode, size, mtime in ns)."""


def digest(text: str) -> bytes:
    """The same in every process (``hash`` of a str is not)."""
    return hashlib.blake2b(text.encode(errors="surrogatepass"), digest_size=12).digest()


def signature_of(path: Path) -> Signature | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


@dataclass(frozen=True, slots=True)
class Read:
    """What a worker made of one file: its facts (encoded), or why it has none."""

    rel: str
    signature: Signature | None
    text_hash: bytes
    data: bytes | None
    why: str = ""
    language: str = ""
    cached: bool = False
    """Its facts came from the cache (else the asker keeps them there)."""


_caches: dict[str, FactsCache] = {}
"""A worker's connection to the facts cache, by build."""


def read_files(root: str, rels: list[str], max_bytes: int, build: str = "") -> list[Read]:
    """A worker's job: read and parse these files of ``root`` (from disk), or take what a
    parse of the same text found before from the facts cache (``build``: the code's)."""
    return _read_files(_cache(build), root, rels, max_bytes)


def keep_facts(rows: list[Row], build: str) -> None:
    """A worker's job once a gather's files are read: keep what the workers parsed in the
    facts cache. Not a thread of the map's process: it ranks meanwhile, and a writer
    taking the GIL in turns slowed its graph and ranking ~10x."""
    _cache(build).put(rows)


def _cache(build: str) -> FactsCache:
    cache = _caches.get(build)
    if cache is None:
        cache = _caches[build] = FactsCache(cache_path() if build else None, build)
    return cache


def _read_files(cache: FactsCache, root: str, rels: list[str], max_bytes: int) -> list[Read]:
    sources = Sources(Path(root), lambda uri: None)
    done: list[Read] = []
    for rel in rels:
        signature = signature_of(Path(root) / rel)
        text = sources.on_disk(rel, max_bytes)
        if isinstance(text, Gone):
            why = _unreadable(text.error, rel, max_bytes) if text.error else text.why
            done.append(Read(rel, signature, b"", None, why))
            continue
        language = language_of(rel)
        if language is None:
            done.append(Read(rel, signature, b"", None, "no parser"))
            continue
        text_hash = digest(text)
        data = cache.get(text_hash, language)
        cached = data is not None
        if data is None:
            try:
                data = encode(facts(text, language))
            except TooDeep as error:  # what a map says of it: it is left out, not lines
                why = f"brackets nested {error.depth:,} deep (more than {MAX_NESTING:,})"
                done.append(Read(rel, signature, b"", None, why))
                continue
            except Unsupported as error:
                done.append(Read(rel, signature, b"", None, str(error)))
                continue
        done.append(Read(rel, signature, text_hash, data, "", language, cached))
    return done


def _unreadable(error: ContextError, rel: str, max_bytes: int) -> str:
    """Why a file the map leaves out could not be read, alike for alike files (the map
    names how many, by reason)."""
    if error.code == ErrorCode.BINARY_FILE:
        return "binary or not UTF-8"
    if error.code == ErrorCode.FILE_TOO_LARGE:
        return f"over maxFileBytes ({max_bytes:,} bytes)"
    return error.message.removeprefix(f"{rel} ")
