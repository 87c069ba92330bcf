"""The embedding model in a process of its own, asked for vectors.

Loaded, the int8 MiniLM takes ~165 MB (onnxruntime folds its weights, dequantized, into
the graph once: without that every query takes ~50 ms rather than ~4), and the daemon
that embeds anything would hold it for good, next to every window, beside the 400 MB a
daemon may take while a map is made. Here it is one worker process's, started as the
model is first needed and ending with the daemon: a text's word pieces are cut here
(the tokenizer alone, ~4 MB), its vectors made there, a round trip of a few hundred
microseconds against the milliseconds of a model run. A native library that crashes
takes the worker, not the daemon: a call whose worker died starts another and asks
again, once (a second death is that call's ModelError).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from contextls.common.processes import process_pool
from contextls.semantic.model import (
    DIMENSIONS,
    VECTORS_ID,
    Embedder,
    ModelError,
    pieces_of,
    word_pieces,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger(__name__)
T = TypeVar("T")

_loaded: dict[Path | None, Embedder] = {}
"""The worker's model, by the file it was loaded from."""


def _model(path: Path | None) -> Embedder:
    embedder = _loaded.get(path)
    if embedder is None:
        embedder = _loaded[path] = Embedder(path)
    return embedder


def _load(path: Path | None) -> None:
    """The worker's first job: load the model (ModelError, pickled back, if it cannot)."""
    _model(path)


def _embed(path: Path | None, texts: list[str]) -> npt.NDArray[np.float32]:
    return _model(path).embed(texts)


def _embed_ids(path: Path | None, id_lists: list[list[int]]) -> npt.NDArray[np.float32]:
    return _model(path).embed_ids(id_lists)


class ProcessEmbedder:
    """``Embedder``'s vectors from a worker process; its word pieces from here."""

    model_id = VECTORS_ID
    dimensions = DIMENSIONS

    def __init__(self, model_path: Path | None = None) -> None:
        """Start the worker and load the model there (ModelError if it cannot)."""
        self.path = model_path
        try:
            self.tokenizer: Any = word_pieces()
        except ImportError as error:
            raise ModelError(f"the contextls[semantic] extra is incomplete: {error}") from error
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        try:
            self._call(_load)
        except BaseException:
            self.close()  # the worker would wait for jobs until the daemon ends
            raise

    def pieces(self, text: str) -> list[int]:
        return pieces_of(self.tokenizer, text)

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return self._call(_embed, texts)

    def embed_ids(self, id_lists: list[list[int]]) -> npt.NDArray[np.float32]:
        return self._call(_embed_ids, id_lists)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def _call(self, job: Callable[..., T], *args: Any) -> T:
        """``job(path, *args)`` in the worker; a worker that died is started once more."""
        for attempt in (1, 2):
            with self._lock:
                if self._pool is None:
                    self._pool = process_pool(1)
                pool = self._pool
            try:
                return pool.submit(job, self.path, *args).result()
            except BrokenProcessPool as error:
                with self._lock:
                    if self._pool is pool:
                        self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)
                if attempt == 2:
                    raise ModelError(f"the embedding process died twice: {error}") from error
                log.warning("the embedding process died; starting it again")
        raise AssertionError("unreachable")
