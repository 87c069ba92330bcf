"""The wire's shared vocabulary: the base of every type, kinds, limits, positions."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, get_args

from msgspec import Meta, Struct

__all__ = [
    "AGENT_CLIENTS",
    "ENCODINGS",
    "ITEM_KINDS",
    "RANGED_KINDS",
    "STORAGE_ENV",
    "TASKS",
    "BudgetPolicy",
    "Durability",
    "Encoding",
    "EvictionPolicy",
    "IdList",
    "ItemId",
    "ItemKind",
    "ItemView",
    "Metadata",
    "ModelName",
    "NonNegative",
    "Position",
    "PositiveLimit",
    "Range",
    "RenderFormat",
    "SearchMode",
    "Task",
    "Wire",
]

STORAGE_ENV: Final = "CONTEXTLS_STORAGE"
"""Environment variable naming the database when the settings do not (the CLI, tests)."""

AGENT_CLIENTS: Final[tuple[str, ...]] = ("contextls-mcp",)
"""``clientInfo.name`` of the clients that act for an agent rather than a person (the MCP
server): the server refuses them a file whose name says it holds secrets (SECRET_FILE),
which a person may still add by naming it."""


class Wire(Struct, rename="camel", kw_only=True):
    """Base of every wire type: camelCase keys, every field always present."""


# --------------------------------------------------------------------------
# Shared vocabulary
# --------------------------------------------------------------------------

ItemKind = Literal["code", "text", "file", "repl-history", "error", "custom"]
"""What a context item holds. A symbol is ``code`` with ``metadata.symbol``."""

ITEM_KINDS: Final[tuple[str, ...]] = get_args(ItemKind)

ItemView = Literal["whole", "outline", "map"]
"""How an item shows its source: all of it, its outline (signatures, the first line of
each docstring, no bodies), or a ranked map of the repository's definitions."""

RANGED_KINDS: Final[frozenset[str]] = frozenset({"code", "file"})
"""Kinds that can point into a file, and so take part in range dedup."""

Encoding = Literal[
    "o200k_base",
    "cl100k_base",
    "claude-v3",
    "claude-v4.7",
    "claude-v4.8",
    "qwen2",
    "qwen3.5",
    "llama3",
    "tekken",
    "gemma3-estimate",
]
"""The tokenizer a count is in; the ``model`` setting picks it by a model's name."""
ENCODINGS: Final[tuple[str, ...]] = get_args(Encoding)
EvictionPolicy = Literal["fifo", "relevance"]
Durability = Literal["normal", "full"]
RenderFormat = Literal["markdown", "xml", "json"]
SearchMode = Literal["keyword", "semantic", "hybrid"]
BudgetPolicy = Literal["fixed", "adaptive"]
ModelName = Annotated[
    str,
    Meta(
        max_length=100,
        description=(
            "The model the context is for, by its name (gpt-4o, gpt-4, claude-3 ... "
            "claude-opus-4.6, claude-opus-4.7, gemini-2.5, qwen3, mistral, llama-3, ...; "
            "aliases such as o200k or claude-opus-4-5 are read too): every count is in its "
            "tokens. Empty: the model of ``encoding``."
        ),
    ),
]
Task = Literal["general", "coding", "debugging", "research", "complex_analysis"]
TASKS: Final[tuple[str, ...]] = get_args(Task)

NonNegative = Annotated[int, Meta(ge=0)]
PositiveLimit = Annotated[int, Meta(ge=1)]
ItemId = Annotated[str, Meta(pattern=r"^ctx-[0-9]+$", description="An item id, ctx-N")]
IdList = Annotated[list[ItemId], Meta(min_length=1, max_length=10_000)]
Metadata = dict[str, Any]


class Position(Wire):
    """An LSP position: 0-based line and UTF-16 character offset."""

    line: NonNegative
    character: NonNegative


class Range(Wire):
    """An LSP range, end exclusive."""

    start: Position
    end: Position
