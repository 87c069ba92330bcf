"""Summarise a conversation with an OpenAI-compatible chat-completions endpoint.

This is the network half of condensing (the decision logic is the pure
``contextls.core.conversation``). It uses only the standard library: one
``urllib.request`` POST run in a worker thread, so the event loop never
blocks, bounded twice: ``asyncio.wait_for`` gives up after the configured
timeout, and the thread itself stops reading at the same deadline (the
socket timeout bounds each blocking read), so neither the request nor the
thread outlives the timeout by much.

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
import time
import urllib.parse
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from contextls.core.conversation import Message, Summarize, SummaryOutcome, SummaryRequest
from contextls.protocol import CondenseSettings

if TYPE_CHECKING:
    import urllib.error
    import urllib.request

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

MAX_RESPONSE_BYTES: Final = 8 * 1024 * 1024
"""A summary is a few KB; refuse to buffer a runaway answer."""

_READ_CHUNK: Final = 64 * 1024
_ERROR_SNIPPET: Final = 300


@dataclass(frozen=True)
class Endpoint:
    """A resolved, validated endpoint: everything one request needs."""

    url: str
    model: str | None
    api_key: str | None
    prompt: str
    timeout: float
    max_tokens: int | None


class CondenseError(Exception):
    """A failure with a message meant for the user (internal to this module)."""


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
                "contextls.condense.apiKeyEnv is not set"
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
# Transport
# --------------------------------------------------------------------------


def _post(endpoint: Endpoint, body: dict[str, Any]) -> bytes:
    """POST and read the answer, blocking; raises ``CondenseError``.

    Runs in a worker thread. The socket timeout bounds each blocking step and
    the deadline bounds the whole read, so a server that trickles bytes
    cannot keep the thread alive much past ``timeout``.
    """
    # Imported here: urllib.request brings http.client, ~23 ms of every server's start
    # (and of a person's first command), for a request few sessions ever send.
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + endpoint.timeout
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    request = urllib.request.Request(
        endpoint.url, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with _opener().open(request, timeout=endpoint.timeout) as response:
            return _read_bounded(response, deadline, endpoint.timeout)
    except urllib.error.HTTPError as exc:
        if 300 <= exc.code < 400:
            where = exc.headers.get("Location", "elsewhere") if exc.headers else "elsewhere"
            raise CondenseError(
                f"the condensing endpoint answered HTTP {exc.code} (a redirect to "
                f"{str(where)[:200]}), which contextls does not follow: the API key goes to the "
                "endpoint of the settings and nowhere else (set contextls.condense.endpoint "
                "to the address it redirects to, if you trust it)"
            ) from exc
        raise CondenseError(_http_error_message(exc)) from exc
    except TimeoutError as exc:
        raise CondenseError(_timeout_message(endpoint.timeout)) from exc
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise CondenseError(_timeout_message(endpoint.timeout)) from exc
        raise CondenseError(
            f"could not reach the condensing endpoint {endpoint.url}: {exc.reason}"
        ) from exc
    except OSError as exc:  # connection reset mid-answer, and the like
        raise CondenseError(f"the condensing request to {endpoint.url} failed: {exc}") from exc


@cache
def _opener() -> urllib.request.OpenerDirector:
    """An opener that follows no redirect: every 3xx is an answer, not a place to go, as
    following one would send the request, with its ``Authorization`` header, to a host
    the settings never named."""
    import urllib.request

    class NoRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(NoRedirects)


def _read_bounded(response: Any, deadline: float, timeout: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := response.read(_READ_CHUNK):
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise CondenseError(
                f"the condensing endpoint's answer is larger than {MAX_RESPONSE_BYTES} bytes"
            )
        if time.monotonic() > deadline:
            raise CondenseError(_timeout_message(timeout))
        chunks.append(chunk)
    return b"".join(chunks)


def _http_error_message(exc: urllib.error.HTTPError) -> str:
    try:
        detail = exc.read(_ERROR_SNIPPET * 4).decode("utf-8", "replace").strip()
    except Exception:  # the body is only a hint; the status is the news
        detail = ""
    message = f"the condensing endpoint answered HTTP {exc.code} {exc.reason}"
    return f"{message}: {detail[:_ERROR_SNIPPET]}" if detail else message


def _timeout_message(timeout: float) -> str:
    return (
        f"the condensing endpoint did not answer within {timeout:g}s (contextls.condense.timeout)"
    )


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
        raw = await asyncio.wait_for(
            asyncio.to_thread(_post, endpoint, body), timeout=endpoint.timeout
        )
    except CondenseError as exc:
        return SummaryOutcome(error=str(exc))
    except TimeoutError:
        return SummaryOutcome(error=_timeout_message(settings.timeout))
    except Exception as exc:  # a bug here must not fail the whole request
        return SummaryOutcome(error=f"condensing failed: {type(exc).__name__}: {exc}")
    return parse_response(raw)


def make_summarizer(settings: CondenseSettings) -> Summarize:
    """A ``Summarize`` callable bound to ``settings`` (read once, at call time)."""

    async def summarize(request: SummaryRequest) -> SummaryOutcome:
        return await summarize_with_endpoint(settings, request)

    return summarize
