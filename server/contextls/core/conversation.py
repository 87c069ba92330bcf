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

import json
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from contextls.core.errors import InvalidParams
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

Message = dict[str, Any]
"""A chat message: ``{"role": str, "content": str | list[block], ...}``."""

CountText = Callable[[str], int]
"""Counts the tokens of a piece of text (tiktoken in the server)."""

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

N_MESSAGES_TO_KEEP: Final = 3
"""Condensing keeps this many of the most recent messages verbatim."""

SLIDING_WINDOW_FRACTION: Final = 0.5
"""Share of the messages after the first that the fallback drops."""

IMAGE_WITHOUT_DATA_TOKENS: Final = 300
"""Estimate for an image block without base64 data (a URL image, say).

Its JSON text would be a handful of tokens while the model will charge
hundreds, so, like Roo Code, we guess high rather than low."""

NOT_ENOUGH_MESSAGES: Final = "Not enough messages to condense"
CONDENSED_RECENTLY: Final = (
    "The conversation was condensed recently; there is nothing new to condense"
)


class ConversationParamsError(InvalidParams):
    """A malformed request value; ``path`` names it as msgspec does
    (``$.messages[2].content``), so decode errors and ours read alike.

    It is an ``InvalidParams``, which the LSP layer maps to JSON-RPC
    ``-32602``.
    """


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
# Token estimates
# --------------------------------------------------------------------------


def estimate_content_tokens(content: object, count_text: CountText) -> int:
    """Estimate the tokens of a message's content.

    ``content`` is a string or a list of Anthropic-style blocks:

    * ``text`` blocks count their text with ``count_text``;
    * ``image`` blocks count ``ceil(sqrt(len(source.data))) * 1.5`` (Roo's
      heuristic: 1000 bytes of base64 -> 32 * 1.5 = 48); an image without
      base64 data counts ``IMAGE_WITHOUT_DATA_TOKENS``;
    * anything else (unknown block types, malformed blocks) counts the tokens
      of its JSON text, so it is never free and never crashes.

    The image terms are halves, as in Roo; we sum them exactly and round the
    total up once at the end (two 10-byte images: 6 + 6 = 12; one 5-byte
    image: 4.5 -> 5), so an estimate never rounds down to less than Roo's.
    Empty content is 0.
    """
    if content is None:
        return 0
    if isinstance(content, str):
        return count_text(content) if content else 0
    if not isinstance(content, list):
        return count_text(_json_text(content))
    total = 0.0
    for block in content:
        total += _block_tokens(block, count_text)
    return math.ceil(total)


def _block_tokens(block: object, count_text: CountText) -> float:
    """One content block's estimate (a float: image estimates are halves)."""
    if isinstance(block, dict):
        kind = block.get("type")
        text = block.get("text")
        if kind == "text" and isinstance(text, str):
            return count_text(text)
        if kind == "image":
            return _image_tokens(block)
    return count_text(_json_text(block))


def _image_tokens(block: Mapping[str, Any]) -> float:
    source = block.get("source")
    data = source.get("data") if isinstance(source, dict) else None
    if not isinstance(data, str):
        return IMAGE_WITHOUT_DATA_TOKENS
    return math.ceil(math.sqrt(len(data))) * 1.5


def _json_text(value: object) -> str:
    """Stable JSON text of any value; falls back to ``repr`` if not JSON-able."""
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        # Mixed-type dict keys cannot be sorted; circular data cannot be dumped.
        return repr(value)


def _messages_tokens(messages: Sequence[Message], count_text: CountText) -> int:
    return sum(estimate_content_tokens(m.get("content"), count_text) for m in messages)


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------


def validate_messages(messages: object) -> list[Message]:
    """Check the shape this module relies on; raise with the bad field's path."""
    if not isinstance(messages, list):
        raise ConversationParamsError(
            "$.messages", f"expected an array of messages, got {_kind(messages)}"
        )
    for i, message in enumerate(messages):
        path = f"$.messages[{i}]"
        if not isinstance(message, dict):
            raise ConversationParamsError(
                path, f"expected an object {{role, content}}, got {_kind(message)}"
            )
        for key in ("role", "content"):
            if key not in message:
                raise ConversationParamsError(f"{path}.{key}", "is required")
        role = message["role"]
        if not isinstance(role, str):
            raise ConversationParamsError(f"{path}.role", f"expected a string, got {_kind(role)}")
        content = message["content"]
        if not isinstance(content, str | list):
            raise ConversationParamsError(
                f"{path}.content",
                f"expected a string or an array of content blocks, got {_kind(content)}",
            )
    return messages


def _kind(value: object) -> str:
    """A JSON-ish name for a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _validate_numbers(context_window: int, total_tokens: int | None) -> None:
    if isinstance(context_window, bool) or not context_window > 0:
        raise ConversationParamsError("$.contextWindow", "must be a number greater than 0")
    if total_tokens is not None and not total_tokens >= 0:
        raise ConversationParamsError("$.totalTokens", "must not be negative")


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
