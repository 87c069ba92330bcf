"""The embedding model runs in a process of its own: the daemon that embeds anything does
not hold it (~165 MB loaded), and a worker that dies is started again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")

from contextls.semantic.embedding_process import ProcessEmbedder  # noqa: E402
from contextls.semantic.model import Embedder, ModelError  # noqa: E402

TEXT = "retry the upload with backoff"

_GROWN = """
from contextls.semantic.embedding_process import ProcessEmbedder

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024

before = rss()
embedder = ProcessEmbedder()
embedder.embed(["retry the upload with backoff"] * 8)
print(rss() - before)
embedder.close()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_process_that_asks_for_vectors_does_not_hold_the_model() -> None:
    """Loaded here the model grew a process by ~190 MB; asked of its own process, the
    asker holds the tokenizer and the answers."""
    ran = subprocess.run([sys.executable, "-c", _GROWN], capture_output=True, text=True, check=True)
    grown = int(ran.stdout.split()[-1])
    assert grown < 60, f"asking for vectors grew the process by {grown} MB"


def test_its_vectors_are_the_models_and_a_worker_that_died_is_started_again() -> None:
    here = Embedder()
    embedder = ProcessEmbedder()
    try:
        first = embedder.embed([TEXT, "parse an email header"])
        assert np.allclose(first, here.embed([TEXT, "parse an email header"]), atol=1e-6)
        assert embedder.pieces(TEXT) == here.pieces(TEXT)
        pool = embedder._pool
        assert pool is not None
        (worker,) = list(pool._processes.values())  # type: ignore[attr-defined]
        assert worker.pid != os.getpid()
        os.kill(worker.pid, signal.SIGKILL)
        worker.join(10)
        deadline = time.monotonic() + 10
        while not pool._broken and time.monotonic() < deadline:  # type: ignore[attr-defined]
            time.sleep(0.01)  # until the pool has seen it (else the call finds it broken)
        again = embedder.embed_ids([here.pieces(TEXT)])
        assert np.allclose(again[0], first[0], atol=1e-6)
        assert embedder._pool is not pool  # a new worker
    finally:
        embedder.close()


def test_a_model_that_cannot_load_is_said_and_leaves_no_worker(tmp_path: Path) -> None:
    import multiprocessing

    before = {child.pid for child in multiprocessing.active_children()}
    with pytest.raises(ModelError, match="missing"):
        ProcessEmbedder(tmp_path / "no-model.onnx")
    deadline = time.monotonic() + 10
    left = [c for c in multiprocessing.active_children() if c.pid not in before]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [c for c in multiprocessing.active_children() if c.pid not in before]
    assert not left, left
