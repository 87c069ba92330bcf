"""The ``contextls/prepareConversation`` service: wire types in, wire types out.

The LSP handler decodes the params, calls ``prepare_conversation`` with the
current condense settings and the workspace's token counter; a malformed
message raises the core's ``ConversationParamsError``, an ``InvalidParams``,
which the LSP layer's one error mapping turns into JSON-RPC ``-32602``. The
decision itself is the pure ``contextls.core.conversation``; the summariser is
``contextls.app.condense``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from contextls.app.condense import make_summarizer
from contextls.core.conversation import TruncateResult, truncate_conversation_if_needed
from contextls.core.conversation_messages import estimate_content_tokens
from contextls.protocol import (
    CondenseSettings,
    PrepareConversationParams,
    PrepareConversationResult,
)

__all__ = ["prepare_conversation"]

log = logging.getLogger(__name__)


async def prepare_conversation(
    params: PrepareConversationParams,
    condense: CondenseSettings,
    count_text: Callable[[str], int],
) -> PrepareConversationResult:
    """Condense or truncate ``params.messages`` as Roo Code would.

    Condensing uses the endpoint in ``condense``; without one, a request that
    asks for condensing gets the "not configured" error and the sliding
    window. Raises ``ConversationParamsError`` for malformed messages.
    """
    counted = await asyncio.to_thread(_counted, params.messages, count_text)

    def count(text: str) -> int:
        tokens = counted.get(text)
        return tokens if tokens is not None else count_text(text)

    result = await truncate_conversation_if_needed(
        params.messages,
        context_window=params.context_window,
        count_text=count,
        total_tokens=params.total_tokens,
        max_tokens=params.max_tokens,
        auto_condense_context=params.auto_condense_context,
        auto_condense_context_percent=params.auto_condense_context_percent,
        system_prompt=params.system_prompt,
        custom_condensing_prompt=params.custom_condensing_prompt,
        profile_thresholds=params.profile_thresholds,
        current_profile_id=params.current_profile_id,
        summarize=make_summarizer(condense),
    )
    _log_outcome(result)
    return result


def _counted(messages: Sequence[object], count_text: Callable[[str], int]) -> dict[str, int]:
    """Every text of the messages counted (in a worker thread: 500 messages of 2 KB in
    Claude's tokens held every client ~0.5 s); the decision then reads the counts."""
    counted: dict[str, int] = {}

    def count(text: str) -> int:
        tokens = counted.get(text)
        if tokens is None:
            tokens = counted[text] = count_text(text)
        return tokens

    for message in messages if isinstance(messages, list) else ():
        if isinstance(message, dict):  # a malformed one is refused by the decision
            estimate_content_tokens(message.get("content"), count)
    return counted


def _log_outcome(result: TruncateResult) -> None:
    for warning in result.warnings:
        log.warning("prepareConversation: %s", warning)
    if result.error:
        log.warning("prepareConversation: condensing failed: %s", result.error)
    if result.truncated:
        log.info(
            "prepareConversation: %s %d of the messages (%d tokens before)",
            "condensed" if result.summary else "dropped",
            result.removed_count,
            result.prev_context_tokens,
        )
