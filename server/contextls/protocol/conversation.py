"""Roo Code's conversation sliding window as a request, and the server's settings."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Meta

from contextls.protocol.params import (
    WindowSettings,
    WorkspaceParams,
)
from contextls.protocol.wire import (
    Durability,
    NonNegative,
    Wire,
)

__all__ = [
    "CondenseSettings",
    "ConversationMessage",
    "PrepareConversationParams",
    "PrepareConversationResult",
    "Settings",
]

# --------------------------------------------------------------------------
# Conversation sliding window (Roo Code's truncateConversationIfNeeded)
# --------------------------------------------------------------------------

ConversationMessage = dict[str, Any]
"""``{role, content, ...}``; content is a string or Anthropic-style blocks
(``{"type": "text", "text"}``, ``{"type": "image", "source": {"data"}}``).
Other keys (``ts``, ``isSummary``) are passed back unchanged."""


class PrepareConversationParams(WorkspaceParams, kw_only=True):
    messages: list[ConversationMessage]
    context_window: Annotated[int, Meta(gt=0)]
    total_tokens: NonNegative | None = None
    max_tokens: NonNegative | None = None
    auto_condense_context: bool = False
    auto_condense_context_percent: float = 100
    system_prompt: str = ""
    custom_condensing_prompt: str | None = None
    profile_thresholds: dict[str, float] = {}
    current_profile_id: str = "default"


class PrepareConversationResult(Wire):
    messages: list[ConversationMessage]
    summary: str
    cost: float
    prev_context_tokens: int
    truncated: bool
    removed_count: int
    new_context_tokens: int | None = None
    error: str | None = None
    warnings: list[str] = []


# --------------------------------------------------------------------------
# Settings (initializationOptions, workspace/didChangeConfiguration)
# --------------------------------------------------------------------------


class CondenseSettings(Wire):
    """An OpenAI-compatible chat-completions endpoint used to summarise chats."""

    endpoint: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    prompt: str | None = None
    timeout: Annotated[float, Meta(gt=0, le=600)] = 60.0
    max_tokens: Annotated[int, Meta(gt=0)] | None = None


class Settings(WindowSettings):
    """What a client sends (initializationOptions, didChangeConfiguration).

    The window keys (``WindowSettings``: maxItems … budgetCeiling) are a client's wish
    for its workspace windows: they are written to a window that has none of its own
    yet, and a change sent while running changes the windows (as
    ``contextls/configure`` does). The window keeps them.
    """

    storage: str | None = None
    """SQLite file path, or ``:memory:``; default is in the user state dir."""
    durability: Durability = "normal"
    """``normal``: a committed change survives the process being killed; ``full``: it
    also survives power loss (SQLite ``synchronous=FULL``, ~0.2 ms more per commit)."""
    condense: CondenseSettings = msgspec.field(default_factory=CondenseSettings)
    allow_any_folder: bool = False
    """Accept system folders (``/etc``, ``/proc``…) and other users' folders as workspace
    folders. Off: every file under such a folder could end up in a model's context."""
