"""Filling a contextls archive with N generated items, two ways.

* ``store``: through ``contextls.storage.store.Store.archive``, the very function the
  server calls when it evicts, in a few big transactions. Fast (seconds for
  100,000 items), so the search bench can use a realistic archive size.
* ``lsp``: through the protocol, as a user would: a server with maxItems 1
  gets the items pipelined, each add evicting the previous one. Slow, but it
  measures the add + evict + archive path as it runs in the server.

Either way the items are distinct ~1 KB code-like texts from ``_corpus``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import _tokenizer
from _corpus import Corpus
from _harness import Lab

ITEM_CHARS = 1000
LSP_SETTINGS: dict[str, Any] = {"max_items": 1, "max_tokens": 10_000_000}
CHUNK = 5000


def texts(corpus: Corpus, start: int, n: int) -> list[str]:
    return [corpus.text(ITEM_CHARS, f"archived item {start + i}") for i in range(n)]


async def workspace_key(the_lab: Lab, workspace: str, storage: Path) -> str:
    """The key the server files this workspace under (Status.workspace)."""
    probe = await the_lab.contextls("probe", workspace=workspace, storage=storage)
    key: str = (await probe.call("contextls/status", {}))["workspace"]
    await the_lab.close(probe)
    return key


def fill_store(storage: Path, root: str, corpus: Corpus, n: int) -> None:
    from contextls.core.items import Item
    from contextls.storage.store import Store, WorkspaceRow

    enc = _tokenizer.encoding()
    store = Store(storage)
    now = int(time.time() * 1000)
    try:
        for start in range(0, n, CHUNK):
            items = [
                Item(
                    id=f"ctx-{start + i + 1}",
                    kind="code",
                    content=text,
                    metadata={"language": "python"},
                    timestamp=now,
                    tokens=len(enc.encode_ordinary(text)),
                    seq=start + i + 1,
                    encoding=enc.name,
                )
                for i, text in enumerate(texts(corpus, start, min(CHUNK, n - start)))
            ]
            with store.write():
                store.archive.add(root, items, "maxItems", now)
            print(f"  archived {start + len(items):,}/{n:,}", flush=True)
        with store.write():
            # Ids are never reused: the window continues after the archive.
            store.windows.save_workspace(root, WorkspaceRow(n + 1, n + 1, 1, n))
    finally:
        store.close()


async def fill_lsp(the_lab: Lab, workspace: str, storage: Path, corpus: Corpus, n: int) -> None:
    filler = await the_lab.contextls("filler", workspace=workspace, storage=storage, **LSP_SETTINGS)
    start = time.perf_counter()
    done = 0
    while done < n:
        size = min(CHUNK, n - done)
        adds = [
            {"kind": "code", "language": "python", "content": t} for t in texts(corpus, done, size)
        ]
        await filler.pipelined("contextls/addText", adds, 64)
        done += size
        rate = done / (time.perf_counter() - start)
        print(f"  added {done:,}/{n:,} ({rate:,.0f} adds/s overall)", flush=True)
    await the_lab.close(filler)


async def fill(
    the_lab: Lab, how: str, workspace: str, storage: Path, corpus: Corpus, n: int
) -> float:
    """Archive ``n`` items; returns the seconds it took."""
    start = time.perf_counter()
    if how == "store":
        try:
            root = await workspace_key(the_lab, workspace, storage)
            fill_store(storage, root, corpus, n)
        except (ImportError, AttributeError, TypeError) as error:
            print(f"  store API not usable ({error!r}); filling through the protocol")
            how = "lsp"
    if how == "lsp":
        await fill_lsp(the_lab, workspace, storage, corpus, n)
    return time.perf_counter() - start
