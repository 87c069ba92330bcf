"""Claude's token counts: ctok's marked stream, tiled with the fewest vocabulary pieces.

ctok (1.3.0, MIT, Sander Land; ``data/LICENSE.ctok``) reconstructs the counts of Claude's
``count_tokens`` offline: text becomes a stream with word, case and byte markers
(``stream.py``), and the count is the fewest pieces of the measured vocabulary that tile it,
a character no piece covers paying for its UTF-8 bytes. ctok tiles with a pure-Python
dynamic programme (~0.3 MB/s). The same minimum is what a Unigram model finds when every
piece scores -1, so where the ``tokenizers`` package is installed its Viterbi search (Rust)
tiles the stream instead; a stream holding a character that is not itself a piece (where
Unigram would fall back to an unknown token) is tiled by the programme, which stays exact.

A count here is the text's own tokens: ``ctok.token_count`` adds the fixed frame of a
one-message request (``message_overhead``: 7 tokens for v3, 11 for v4.7).
"""

from __future__ import annotations

import gzip
import json
import threading
from importlib import resources
from typing import Any, Final

from contextls.core.claude.letters import nfc
from contextls.core.claude.stream import raw_head_space, stream_norm
from contextls.core.claude.tables import EOW_G, ESCAPED_MARKER_LITERALS, MARKER_GLYPHS

LONG_STREAM: Final = 2048
"""Characters from which a count lets other threads run (below it, encode is cheaper)."""

FAMILIES: Final = {
    "claude-v3": "claude_v3",
    "claude-v4.7": "claude_v4_7",
    "claude-v4.8": "claude_v4_7",  # the same vocabulary; its frame ends without a ⟨bow⟩
}


class ClaudeCounter:
    """Counts one family's tokens; ``additive`` is False: the stream depends on where a
    text starts and ends (a leading space, a final run of newlines), so pieces of a text
    do not add up to it."""

    additive = False

    def __init__(self, family: str, fast: bool = True) -> None:
        packed = resources.files("contextls.core.claude").joinpath(
            "data", f"{FAMILIES[family]}.json.gz"
        )
        doc: dict[str, Any] = json.loads(gzip.decompress(packed.read_bytes()))
        meta = doc["meta"]
        self.family = family
        self.message_overhead: int = meta["message_overhead"]
        self.fold_quotes: bool = meta["fold_quotes"]
        self.allcaps_min: int | None = meta["allcaps_min"]
        self.frame_bow = family != "claude-v4.8"
        pieces: list[str] = doc["pieces"]
        self.unit_pieces = {p for p in pieces if len(p) == 1 and p not in MARKER_GLYPHS}
        self.vocab = frozenset(pieces) | {c + EOW_G for c in doc["contractions"]}
        self.singles = frozenset(p for p in self.vocab if len(p) == 1)
        self._byte_tokens = set(doc["bytes"]) | {c.encode().hex() for c in self.unit_pieces}
        self._byte_max = max((len(k) // 2 for k in self._byte_tokens), default=1)
        self._char_costs: dict[str, int] = {}
        self._trie: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self._unigram: Any = _unigram(self.vocab) if fast else None

    @property
    def engine(self) -> str:
        return "tokenizers (Unigram)" if self._unigram is not None else "pure Python"

    def count(self, text: str) -> int:
        norm = nfc(text, fold_quotes=self.fold_quotes)
        tail = len(norm) - len(norm.rstrip("\n"))
        stream = stream_norm(norm, self, raw_head_space=raw_head_space(text))
        total = self._frame_tail(tail)
        if stream:
            total += self._tile(stream)
        return total

    def _tile(self, stream: str) -> int:
        if self._unigram is not None and self.singles.issuperset(stream):
            if len(stream) < LONG_STREAM:
                return len(self._unigram.encode(stream, add_special_tokens=False).ids)
            # encode_batch lets other threads run while it works (encode holds the GIL for
            # its whole run: 1.4 s of a daemon's event loop for 1 MiB).
            (encoded,) = self._unigram.encode_batch([stream], add_special_tokens=False)
            return len(encoded.ids)
        return self._tile_slowly(stream)

    def _frame_tail(self, newlines: int) -> int:
        """What a final run of newlines costs beyond the frame's own ``\\n\\n`` token (the
        frame's newlines join the run, so the cost is not monotonic in its length)."""
        if newlines == 0:
            return 0
        return self._tile("\n" * (newlines + 2)) - 1

    # ------------------------------------------------------------- the programme

    def _tile_slowly(self, text: str) -> int:
        """ctok's ``min_vocab_tile``: the fewest pieces, a character no piece covers paying
        its byte floor (a marker 1)."""
        trie = self._reverse_trie()
        best = [0] * (len(text) + 1)
        for end in range(1, len(text) + 1):
            start = end - 1
            node = trie.get(text[start])
            best[end] = best[start] + (
                1 if node is not None and None in node else self._floor(text[start])
            )
            if node is None:
                continue
            for start in range(end - 2, -1, -1):
                node = node.get(text[start])
                if node is None:
                    break
                if None in node and best[start] + 1 < best[end]:
                    best[end] = best[start] + 1
        return best[-1]

    def _reverse_trie(self) -> dict[str, Any]:
        with self._lock:
            if self._trie is None:
                root: dict[str, Any] = {}
                for piece in self.vocab:
                    node = root
                    for ch in reversed(piece):
                        node = node.setdefault(ch, {})
                    node[None] = None  # type: ignore[index]
                self._trie = root
            return self._trie

    def _floor(self, ch: str) -> int:
        if ch in MARKER_GLYPHS:
            return 1
        ch = ESCAPED_MARKER_LITERALS.get(ch, ch)
        cost = self._char_costs.get(ch)
        if cost is None:
            cost = 1 if ch in self.unit_pieces else self._byte_floor(ch.encode())
            self._char_costs[ch] = cost
        return cost

    def _byte_floor(self, data: bytes) -> int:
        """The fewest byte-prefix tokens (or single bytes) that make ``data``."""
        best = [0] + [len(data) + 1] * len(data)
        for i in range(1, len(data) + 1):
            for j in range(max(0, i - self._byte_max), i):
                if i - j == 1 or data[j:i].hex() in self._byte_tokens:
                    best[i] = min(best[i], best[j] + 1)
        return best[-1]


def _unigram(vocab: frozenset[str]) -> Any:
    """A Unigram model over ``vocab`` with every piece scoring -1: its Viterbi path is a
    tiling with the fewest pieces. None where ``tokenizers`` is not installed."""
    try:
        from tokenizers import Tokenizer
        from tokenizers.models import Unigram
    except ImportError:
        return None
    entries = [("\x00", 0.0), *((piece, -1.0) for piece in sorted(vocab))]
    return Tokenizer(Unigram(entries, unk_id=0, byte_fallback=False))
