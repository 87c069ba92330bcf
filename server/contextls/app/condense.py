"""Summarise a conversation with an OpenAI-compatible chat-completions endpoint.

This is the network half of condensing (the decision logic is the pure
``contextls.core.conversation``). It uses only the standard library: one
``urllib.request`` POST run in a worker thread, so the event loop never
blocks, bounded as a whole: the thread's socket is shut down at the deadline,
so neither the request nor the thread outlives the timeout (``condense_http``).

``condense.endpoint`` may be a base URL (``https://api.openai.com/v1``,
``http://127.0.0.1:8080/v1``) to which ``/chat/completions`` is appended, or
the full ``.../chat/completions`` URL (query strings such as Azure's
``?api-version=`` are kept). Nothing else is guessed: a base URL without
``/v1`` gets ``/chat/completions`` appended directly.

Every failure (no endpoint, unset API key variable, HTTP error, timeout,
unreadable or empty answer) comes back as ``SummaryOutcome.error``, a
sentence a person can act on; no exception escapes.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import urllib.parse
from dataclasses import dataclass
from typing import Any, Final

from contextls.app.condense_http import CondenseError, post, redact, timeout_message
from contextls.core.conversation import Message, Summarize, SummaryOutcome, SummaryRequest
from contextls.protocol import CondenseSettings

__all__ = [
    "DEFAULT_CONDENSE_PROMPT",
    "FINAL_REQUEST",
    "NOT_CONFIGURED",
    "Endpoint",
    "build_request_body",
    "chat_completions_url",
    "make_summarizer",
    "summarize_with_endpoint",
]

NOT_CONFIGURED: Final = "condensing is not configured: set contextls.condense.endpoint"

DEFAULT_CONDENSE_PROMPT: Final = """\
You are condensing the history of a conversation between a user and an AI \
coding assistant so that the assistant can carry on after the older messages \
are removed. Only your summary will remain, so leave out nothing the \
assistant needs to finish the work, and drop chit-chat and repetition.

Write the summary in these sections:

1. Goal: what the user asked for, in their words where it matters, including \
every explicit requirement, constraint and preference.
2. Decisions and knowledge: technical choices made and why, facts learned \
about the code base, libraries and tools, and approaches already tried that \
failed.
3. Files and code: each file read, created or changed, with what matters \
about it; keep short code excerpts, signatures and exact error messages \
verbatim.
4. Progress: what is done and verified, and what is done but unverified.
5. Open problems: errors still unresolved and questions still unanswered.
6. Next step: exactly what the assistant was doing or about to do when the \
conversation was cut, quoting the latest instruction from the user.

Be factual and specific: names, paths, numbers and commands, not \
generalities. Do not invent anything that is not in the conversation. \
Answer with the summary only."""

FINAL_REQUEST: Final = "Summarize the conversation so far, as described in the prompt instructions."


@dataclass(frozen=True)
class Endpoint:
    """A resolved, validated endpoint: everything one request needs."""

    url: str
    model: str | None
    api_key: str | None
    prompt: str
    timeout: float
    max_tokens: int | None


# --------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------


def chat_completions_url(endpoint: str) -> str:
    """The chat-completions URL for a base URL or a full endpoint URL."""
    parts = urllib.parse.urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CondenseError(f"contextls.condense.endpoint must be an http(s) URL, got {endpoint!r}")
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path += "/chat/completions"
    return urllib.parse.urlunsplit(parts._replace(path=path))


def resolve_endpoint(settings: CondenseSettings, custom_prompt: str | None) -> Endpoint:
    """Check the settings and read the API key; raise ``CondenseError`` if unusable.

    The prompt is the request's own custom prompt, else the configured one,
    else ``DEFAULT_CONDENSE_PROMPT`` (blank ones do not count).
    """
    if not settings.endpoint or not settings.endpoint.strip():
        raise CondenseError(NOT_CONFIGURED)
    url = chat_completions_url(settings.endpoint)
    api_key = None
    if settings.api_key_env:
        api_key = os.environ.get(settings.api_key_env)
        if not api_key:
            # Sending the request unauthenticated would only earn a vaguer 401.
            raise CondenseError(
                f"the environment variable {settings.api_key_env} named by "
                "contextls.condense.apiKeyEnv is not set in the environment of the contextls "
                f"server (pid {os.getpid()}); a daemon has the environment of the command that "
                f"started it: set {settings.api_key_env} there and restart it "
                "(contextls daemon stop)"
            )
    prompt = next(
        (p for p in (custom_prompt, settings.prompt) if p and p.strip()),
        DEFAULT_CONDENSE_PROMPT,
    )
    return Endpoint(url, settings.model, api_key, prompt, settings.timeout, settings.max_tokens)


# --------------------------------------------------------------------------
# Request and response
# --------------------------------------------------------------------------


def build_request_body(messages: list[Message], endpoint: Endpoint) -> dict[str, Any]:
    """The chat-completions JSON: the prompt, the conversation as text, the ask."""
    chat: list[dict[str, str]] = [{"role": "system", "content": endpoint.prompt}]
    chat.extend(
        {"role": _chat_role(m.get("role")), "content": _content_text(m.get("content"))}
        for m in messages
    )
    chat.append({"role": "user", "content": FINAL_REQUEST})
    body: dict[str, Any] = {"messages": chat}
    # Some local servers serve one model and need no name; send it only if set.
    if endpoint.model:
        body["model"] = endpoint.model
    if endpoint.max_tokens is not None:
        body["max_tokens"] = endpoint.max_tokens
    return body


def _chat_role(role: object) -> str:
    # Chat APIs accept alternating user/assistant turns; anything else
    # (a stray "system" or a tool role) is presented as user input.
    return role if role in ("user", "assistant") else "user"


def _content_text(content: object) -> str:
    """Flatten Anthropic-style content to text: images become a placeholder
    (the summariser may not see images, and base64 would waste its context)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else _json(content)
    parts: list[str] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            parts.append(text if isinstance(text, str) else _json(text))
        elif isinstance(block, dict) and block.get("type") == "image":
            parts.append("[image]")
        else:
            parts.append(_json(block))
    return "\n\n".join(parts)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)


def parse_response(raw: bytes) -> SummaryOutcome:
    """Read ``choices[0].message.content`` and ``usage.cost`` from an answer."""
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return SummaryOutcome(error="the condensing endpoint did not answer with JSON")
    if not isinstance(data, dict):
        return SummaryOutcome(error="the condensing endpoint answered with unexpected JSON")
    cost = _usage_cost(data.get("usage"))
    summary = _first_choice_text(data.get("choices"))
    if summary is None:
        return SummaryOutcome(
            cost=cost, error="the condensing endpoint's answer has no choices[0].message.content"
        )
    if not summary.strip():
        return SummaryOutcome(cost=cost, error="the condensing endpoint returned an empty summary")
    return SummaryOutcome(summary=summary.strip(), cost=cost)


def _first_choice_text(choices: object) -> str | None:
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        # Some servers answer with content parts: [{"type": "text", "text": ...}].
        texts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(t for t in texts if isinstance(t, str))
    return None


def _usage_cost(usage: object) -> float:
    """``usage.cost`` when a provider reports it (OpenRouter does), else 0."""
    cost = usage.get("cost") if isinstance(usage, dict) else None
    if not isinstance(cost, int | float) or isinstance(cost, bool):
        return 0.0
    return float(cost) if math.isfinite(cost) and cost >= 0 else 0.0


# --------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------


async def summarize_with_endpoint(
    settings: CondenseSettings, request: SummaryRequest
) -> SummaryOutcome:
    """Summarise ``request.messages``; never raises, never exceeds the timeout.

    The conversation's system prompt is not sent: it is instructions for the
    assistant, often thousands of tokens, and says nothing about what
    happened in the conversation.
    """
    try:
        endpoint = resolve_endpoint(settings, request.custom_prompt)
        body = build_request_body(request.messages, endpoint)
        data = json.dumps(body).encode()
        # The thread ends at the same deadline (see condense_http), so waiting longer
        # than it by a little only lets its own timeout message through.
        raw = await asyncio.wait_for(
            asyncio.to_thread(post, endpoint.url, endpoint.api_key, data, endpoint.timeout),
            timeout=endpoint.timeout + 1.0,
        )
    except CondenseError as exc:
        return SummaryOutcome(error=str(exc))
    except TimeoutError:
        return SummaryOutcome(error=timeout_message(settings.timeout))
    except Exception as exc:  # a bug here must not fail the whole request
        return SummaryOutcome(error=f"condensing failed: {type(exc).__name__}: {exc}")
    outcome = parse_response(raw)
    key = endpoint.api_key
    return SummaryOutcome(
        summary=redact(outcome.summary, key),
        cost=outcome.cost,
        error=redact_optional(outcome.error, key),
    )


def redact_optional(text: str | None, secret: str | None) -> str | None:
    return None if text is None else redact(text, secret)


def make_summarizer(settings: CondenseSettings) -> Summarize:
    """A ``Summarize`` callable bound to ``settings`` (read once, at call time)."""

    async def summarize(request: SummaryRequest) -> SummaryOutcome:
        return await summarize_with_endpoint(settings, request)

    return summarize
