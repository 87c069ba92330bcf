"""Condensing a conversation: the older turns summarised by an injected LLM call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from contextls.core.conversation_messages import (
    CountText,
    Message,
    _messages_tokens,
)

N_MESSAGES_TO_KEEP: Final = 3
"""Condensing keeps this many of the most recent messages verbatim."""

NOT_ENOUGH_MESSAGES: Final = "Not enough messages to condense"
CONDENSED_RECENTLY: Final = (
    "The conversation was condensed recently; there is nothing new to condense"
)


@dataclass(frozen=True)
class SummaryRequest:
    """What a summariser is asked to condense."""

    messages: list[Message]
    """The older messages to summarise (the recent ones are kept verbatim)."""
    system_prompt: str
    """The conversation's own system prompt, for context; may be empty."""
    custom_prompt: str | None
    """Condensing instructions overriding the summariser's default, if set."""


@dataclass(frozen=True)
class SummaryOutcome:
    """A summariser's answer: the summary text, or an error; cost either way."""

    summary: str = ""
    cost: float = 0.0
    error: str | None = None


Summarize = Callable[[SummaryRequest], Awaitable[SummaryOutcome]]
"""The condenser: an async call to an LLM. It should report failures in
``SummaryOutcome.error``; an exception it raises is turned into one."""


# --------------------------------------------------------------------------
# Condensing
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Condensed:
    messages: list[Message]
    summary: str
    cost: float
    new_context_tokens: int


@dataclass(frozen=True)
class _CondenseFailed:
    error: str
    cost: float = 0.0


def _messages_to_summarize(older: list[Message]) -> list[Message]:
    """The older messages a new summary must cover.

    All of them, but starting at the latest summary if there is one (it
    already stands for what came before it); the first message stays in
    front because it states the task.
    """
    last_summary = max((i for i, m in enumerate(older) if _is_summary(m)), default=None)
    if last_summary is None or last_summary == 0:
        return older
    return [older[0], *older[last_summary:]]


def _is_summary(message: Message) -> bool:
    return message.get("isSummary") is True


async def _condense(
    messages: list[Message],
    *,
    summarize: Summarize | None,
    system_prompt: str,
    custom_prompt: str | None,
    prev_context_tokens: int,
    count_text: CountText,
    count_system_prompt: bool,
) -> _Condensed | _CondenseFailed:
    """Replace the older messages by a summary: ``[first, summary, *last 3]``."""
    if len(messages) <= N_MESSAGES_TO_KEEP + 1:
        # Nothing between the first message and the kept tail to summarise.
        return _CondenseFailed(NOT_ENOUGH_MESSAGES)
    older = messages[: len(messages) - N_MESSAGES_TO_KEEP]
    kept = messages[len(messages) - N_MESSAGES_TO_KEEP :]
    if _is_summary(older[-1]) or any(_is_summary(m) for m in kept):
        # Nothing new since the last summary: another one would only cost money.
        return _CondenseFailed(CONDENSED_RECENTLY)
    if summarize is None:
        return _CondenseFailed("condensing is not configured: no summariser is available")

    request = SummaryRequest(_messages_to_summarize(older), system_prompt, custom_prompt)
    outcome = await _call_summarizer(summarize, request)
    if outcome.error:
        return _CondenseFailed(outcome.error, outcome.cost)
    summary = outcome.summary.strip()
    if not summary:
        return _CondenseFailed("condensing failed: the summary was empty", outcome.cost)

    summary_message: Message = {"role": "assistant", "content": summary, "isSummary": True}
    if "ts" in kept[0]:
        # Place the summary in time just before the first kept message.
        summary_message["ts"] = kept[0]["ts"]
    condensed = [messages[0], summary_message, *kept]
    new_tokens = _messages_tokens(condensed, count_text)
    if count_system_prompt:
        new_tokens += count_text(system_prompt) if system_prompt else 0
    if new_tokens >= prev_context_tokens:
        return _CondenseFailed(
            f"condensing did not make the context smaller "
            f"({prev_context_tokens:,} -> {new_tokens:,} tokens)",
            outcome.cost,
        )
    return _Condensed(condensed, summary, outcome.cost, new_tokens)


async def _call_summarizer(summarize: Summarize, request: SummaryRequest) -> SummaryOutcome:
    """Call the summariser; an exception becomes an error, never a failed request."""
    try:
        return await summarize(request)
    except Exception as exc:  # the fallback must still run
        return SummaryOutcome(error=f"condensing failed: {type(exc).__name__}: {exc}")
