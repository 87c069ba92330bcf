"""Roo Code's conversation sliding window, as pure functions.

This is the decision logic behind ``contextls/prepareConversation``: given a
chat history about to be sent to a model, decide whether it still fits the
model's context window and, if not, condense it (an LLM summary of the older
turns) or drop the oldest turns (the sliding window).

The rules, from Roo Code's ``truncateConversationIfNeeded``:

* ``reservedTokens = maxTokens or 8192`` (room kept for the model's reply);
* ``prevContextTokens = totalTokens + tokens(last message)``;
* ``allowedTokens = contextWindow * 0.9 - reservedTokens`` (a 10% buffer,
  because token counts are estimates);
* with ``autoCondenseContext`` and either ``100 * prev / contextWindow >=
  threshold`` or ``prev > allowed`` the history is condensed; if condensing
  fails its error (and cost) is reported and the sliding window applies;
* the sliding window (``prev > allowed``) keeps the first message and drops
  half of the rest from the front, an even number so user/assistant turns
  stay paired.

Nothing here does I/O: token counting (``count_text``) and summarising
(``summarize``) are injected, so the module is testable and the network
client lives in ``contextls.app.condense``.

Messages are plain dicts (``{"role", "content", ...}``); keys this module does
not use (``ts``, ``isSummary``, ...) travel through unchanged, and the dicts
that are kept are the caller's own objects.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Final, TypeVar

from contextls.core.condensing import (
    N_MESSAGES_TO_KEEP,
    Summarize,
    SummaryOutcome,
    SummaryRequest,
    _condense,
    _Condensed,
)
from contextls.core.conversation_messages import (
    ConversationParamsError,
    CountText,
    Message,
    _messages_tokens,
    _validate_numbers,
    estimate_content_tokens,
    validate_messages,
)
from contextls.protocol import PrepareConversationResult

__all__ = [
    "DEFAULT_RESERVED_TOKENS",
    "MAX_CONDENSE_THRESHOLD",
    "MIN_CONDENSE_THRESHOLD",
    "N_MESSAGES_TO_KEEP",
    "SLIDING_WINDOW_FRACTION",
    "TOKEN_BUFFER_PERCENTAGE",
    "ConversationParamsError",
    "CountText",
    "Message",
    "Summarize",
    "SummaryOutcome",
    "SummaryRequest",
    "TruncateResult",
    "effective_threshold",
    "estimate_content_tokens",
    "truncate_conversation",
    "truncate_conversation_if_needed",
    "validate_messages",
]

T = TypeVar("T")

TOKEN_BUFFER_PERCENTAGE: Final = 0.1
"""Share of the context window kept free, because counts are estimates."""

DEFAULT_RESERVED_TOKENS: Final = 8192
"""Reply room when the caller gives no ``maxTokens`` (Anthropic's default)."""

MIN_CONDENSE_THRESHOLD: Final = 50
MAX_CONDENSE_THRESHOLD: Final = 100
"""A per-profile condensing threshold must lie in this range (percent)."""

INHERIT_THRESHOLD: Final = -1
"""A per-profile threshold of -1 means "use the global percentage"."""

SLIDING_WINDOW_FRACTION: Final = 0.5
"""Share of the messages after the first that the fallback drops."""


TruncateResult = PrepareConversationResult
"""Roo Code's ``TruncateResponse`` plus what the client needs to show (``truncated``:
the returned messages differ from the input; ``removedCount``: input messages not in
the result). It is the wire result itself, so the service returns it unchanged."""


# --------------------------------------------------------------------------
# Sliding window
# --------------------------------------------------------------------------


def truncate_conversation(messages: Sequence[T], frac_to_remove: float) -> list[T]:
    """Keep the first message and drop ``frac_to_remove`` of the rest, oldest first.

    The count dropped is ``floor((n - 1) * frac)`` rounded down to an even
    number, so user/assistant turns stay paired: 5 messages at 0.5 keep
    ``[1, 4, 5]``; 7 messages at 0.5 drop 2 (3 rounded down) and keep
    ``[1, 4, 5, 6, 7]``; 7 at 0.3 drop nothing.
    """
    if not 0.0 <= frac_to_remove <= 1.0:
        raise ValueError(f"frac_to_remove must be between 0 and 1, got {frac_to_remove}")
    if not messages:
        return []
    to_remove = _even_floor(math.floor((len(messages) - 1) * frac_to_remove))
    return [messages[0], *messages[1 + to_remove :]]


def _even_floor(count: int) -> int:
    """The largest even number not above ``count`` (``count`` >= 0)."""
    return count - count % 2


# --------------------------------------------------------------------------
# Thresholds
# --------------------------------------------------------------------------


def effective_threshold(
    global_percent: float,
    profile_thresholds: Mapping[str, float],
    profile_id: str,
    warnings: list[str],
) -> float:
    """The condensing threshold (percent) for ``profile_id``.

    A profile value of -1 or none means the global percentage; 50..100 is used
    as is; anything else is a configuration mistake: we warn (appending to
    ``warnings``) and use the global percentage rather than fail the request.
    """
    value = profile_thresholds.get(profile_id)
    if value is None or value == INHERIT_THRESHOLD:
        return global_percent
    if not isinstance(value, bool) and MIN_CONDENSE_THRESHOLD <= value <= MAX_CONDENSE_THRESHOLD:
        return value
    warnings.append(
        f"profile threshold {value!r} for profile {profile_id!r} is not -1 or within "
        f"{MIN_CONDENSE_THRESHOLD}..{MAX_CONDENSE_THRESHOLD}; "
        f"using the global threshold {global_percent:g}%"
    )
    return global_percent


# --------------------------------------------------------------------------
# The decision
# --------------------------------------------------------------------------


async def truncate_conversation_if_needed(
    messages: list[Message],
    *,
    context_window: int,
    count_text: CountText,
    total_tokens: int | None = None,
    max_tokens: int | None = None,
    auto_condense_context: bool = False,
    auto_condense_context_percent: float = 100,
    system_prompt: str = "",
    custom_condensing_prompt: str | None = None,
    profile_thresholds: Mapping[str, float] | None = None,
    current_profile_id: str = "default",
    summarize: Summarize | None = None,
) -> TruncateResult:
    """Condense or truncate ``messages`` if they no longer fit; see the module doc.

    ``total_tokens`` is the context size without the last message (what the
    previous API call reported); when omitted we count every message but the
    last. ``summarize`` is only called when condensing is enabled and due.

    ``new_context_tokens`` (set after a successful condense) counts the
    resulting messages, plus the system prompt when ``total_tokens`` was
    given: a reported ``total_tokens`` includes the system prompt, our own
    count does not, and the two sides of the "did it get smaller?" check must
    be measured the same way.

    Raises ``ConversationParamsError`` for malformed messages or numbers.
    """
    validate_messages(messages)
    _validate_numbers(context_window, total_tokens)
    warnings: list[str] = []
    if not messages:
        return TruncateResult(
            messages=[],
            summary="",
            cost=0.0,
            prev_context_tokens=total_tokens or 0,
            truncated=False,
            removed_count=0,
            warnings=warnings,
        )

    reserved_tokens = max_tokens or DEFAULT_RESERVED_TOKENS
    reported_total = total_tokens is not None
    if total_tokens is None:
        total_tokens = _messages_tokens(messages[:-1], count_text)
    prev = total_tokens + estimate_content_tokens(messages[-1]["content"], count_text)
    allowed = context_window * (1 - TOKEN_BUFFER_PERCENTAGE) - reserved_tokens
    threshold = effective_threshold(
        auto_condense_context_percent, profile_thresholds or {}, current_profile_id, warnings
    )

    error: str | None = None
    cost = 0.0
    if auto_condense_context and (100 * prev / context_window >= threshold or prev > allowed):
        outcome = await _condense(
            messages,
            summarize=summarize,
            system_prompt=system_prompt,
            custom_prompt=custom_condensing_prompt,
            prev_context_tokens=prev,
            count_text=count_text,
            count_system_prompt=reported_total,
        )
        if isinstance(outcome, _Condensed):
            return _condensed_result(messages, outcome, prev, allowed, warnings)
        error, cost = outcome.error, outcome.cost

    if prev > allowed:
        kept = truncate_conversation(messages, SLIDING_WINDOW_FRACTION)
        removed = len(messages) - len(kept)
        if removed == 0:
            warnings.append(
                f"the context ({prev:,} tokens) exceeds the {allowed:,.0f} allowed, "
                f"but {len(messages)} messages are too few to truncate"
            )
        return TruncateResult(
            messages=kept,
            summary="",
            cost=cost,
            prev_context_tokens=prev,
            truncated=removed > 0,
            removed_count=removed,
            error=error,
            warnings=warnings,
        )
    return TruncateResult(
        messages=messages,
        summary="",
        cost=cost,
        prev_context_tokens=prev,
        truncated=False,
        removed_count=0,
        error=error,
        warnings=warnings,
    )


def _condensed_result(
    messages: list[Message],
    outcome: _Condensed,
    prev: int,
    allowed: float,
    warnings: list[str],
) -> TruncateResult:
    if outcome.new_context_tokens > allowed:
        # Roo returns the condensed history as is; a second sliding-window pass
        # would drop the summary itself, so we only tell the caller.
        warnings.append(
            f"the condensed context ({outcome.new_context_tokens:,} tokens) still exceeds "
            f"the {allowed:,.0f} allowed"
        )
    # The first message and the kept tail survive; the summary is new.
    removed = len(messages) - (len(outcome.messages) - 1)
    return TruncateResult(
        messages=outcome.messages,
        summary=outcome.summary,
        cost=outcome.cost,
        prev_context_tokens=prev,
        truncated=True,
        removed_count=removed,
        new_context_tokens=outcome.new_context_tokens,
        error=None,
        warnings=warnings,
    )
