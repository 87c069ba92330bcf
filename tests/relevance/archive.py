"""The relevance set's documents archived into a real store file and embedded by the
real worker, once: the file is kept in the cache folder under a digest of the
documents and the model, and copied for each use.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

from contextls.core.items import Item
from contextls.semantic.engine import Engine
from contextls.semantic.model import VECTORS_ID
from contextls.storage.store import Store

from .dataset import Document

ROOT = "file:///relevance"


def cache_folder() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "contextls-relevance"


def items_of(docs: Sequence[Document]) -> list[Item]:
    items = []
    for n, doc in enumerate(docs, 1):
        metadata: dict[str, object] = {"path": doc.path}
        if doc.kind == "code":
            metadata.update(symbol=doc.symbol, language=doc.language)
        items.append(
            Item(
                id=f"ctx-{n}",
                kind=doc.kind,
                content=doc.content,
                metadata=metadata,
                timestamp=n,
                tokens=max(1, len(doc.content) // 4),
                encoding="o200k_base",
            )
        )
    return items


def digest(docs: Sequence[Document]) -> str:
    h = hashlib.sha256(VECTORS_ID.encode())
    for doc in docs:
        h.update(f"{doc.key}\0{doc.path}\0{doc.kind}\0{doc.content}\0".encode())
    return h.hexdigest()[:16]


def embedded_store(
    docs: Sequence[Document], into: Path, say: bool = True, keep: bool = True
) -> Path:
    """A store file at ``into`` whose archive under ``ROOT`` holds ``docs`` (ids
    ``ctx-1``...), every one embedded; built once per digest and kept in the cache
    folder, then copied (``keep=False``: built in ``into``'s folder, kept nowhere)."""
    folder = cache_folder() if keep else into.parent
    cached = folder / f"archive-{digest(docs)}.sqlite3"
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        building = cached.with_suffix(".building")
        for leftover in building.parent.glob(building.name + "*"):
            leftover.unlink()
        started = time.monotonic()
        store = Store(building)
        with store.write():
            store.archive.add(ROOT, items_of(docs), "evicted", 0)
            store.index.index_backlog()
        engine = Engine(store.location)
        assert engine.available, engine.reason
        while engine.index_some() is not False:
            engine.wait()
            if say:
                print(f"  embedding {len(docs)} documents: {engine.stored}", end="\r", flush=True)
        engine.stop()
        if say:
            print(f"  embedded {len(docs)} documents in {time.monotonic() - started:.0f} s")
        # The engine's connections stay open: a backup is a consistent copy, WAL included.
        source = sqlite3.connect(building)
        target = sqlite3.connect(cached.with_suffix(".copy"))
        source.backup(target)
        target.close()
        source.close()
        store.close()
        cached.with_suffix(".copy").rename(cached)
        for built in building.parent.glob(building.name + "*"):
            built.unlink()
    shutil.copyfile(cached, into)
    return into
