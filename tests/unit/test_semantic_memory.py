"""The embedding model's memory: the daemon holds it once anything was embedded, so what
it takes is the daemon's (measured in a process of its own, before and after loading)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")

_LOAD = """
import numpy, onnxruntime, tokenizers
from contextls.semantic.model import Embedder

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024

before = rss()
embedder = Embedder()
embedder.embed(["retry the upload with backoff"] * 8)
print(rss() - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_loaded_model_takes_what_the_model_file_does_not_an_optimised_copy() -> None:
    """onnxruntime's graph optimiser kept a copy of the int8 model's weights worth ~160
    MB; the model as written takes ~40 MB and embeds the same vectors as fast."""
    grown = int(
        subprocess.run(
            [sys.executable, "-c", _LOAD], capture_output=True, text=True, check=True
        ).stdout.split()[-1]
    )
    assert grown < 100, f"loading the embedder grew the process by {grown} MB"
