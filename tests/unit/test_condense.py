"""The chat-completions summariser (contextls.app.condense) against a real local
HTTP server, and the prepareConversation service that wires it to the core."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from contextls.app.condense import (
    DEFAULT_CONDENSE_PROMPT,
    FINAL_REQUEST,
    NOT_CONFIGURED,
    chat_completions_url,
    make_summarizer,
    summarize_with_endpoint,
)
from contextls.app.prepare import prepare_conversation
from contextls.core.conversation import ConversationParamsError, SummaryRequest
from contextls.protocol import CondenseSettings, PrepareConversationParams
from tests.support.fake_llm import FakeLLM

KEY_ENV = "CONTEXTLS_TEST_CONDENSE_KEY"

CONVERSATION: list[dict[str, Any]] = [
    {"role": "user", "content": "Add retries to fetch()."},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Reading fetch.py"},
            {"type": "image", "source": {"type": "base64", "data": "QUJD" * 100}},
            {"type": "tool_use", "name": "read", "input": {"path": "fetch.py"}},
        ],
    },
    {"role": "system", "content": "stray system note"},
]


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy from the environment must not intercept 127.0.0.1."""
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


def settings_for(llm: FakeLLM, **overrides: Any) -> CondenseSettings:
    values: dict[str, Any] = {"endpoint": llm.base_url, "model": "fake-model", "timeout": 5.0}
    values.update(overrides)
    return CondenseSettings(**values)


def ask(messages: list[dict[str, Any]] | None = None, custom: str | None = None) -> SummaryRequest:
    return SummaryRequest(messages or CONVERSATION, "the agent's system prompt", custom)


# --------------------------------------------------------------------------
# URL handling
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("endpoint", "url"),
    [
        ("http://h:1/v1", "http://h:1/v1/chat/completions"),
        ("http://h:1/v1/", "http://h:1/v1/chat/completions"),
        ("https://h/v1/chat/completions", "https://h/v1/chat/completions"),
        (
            "https://h/openai/chat/completions?api-version=2024",
            "https://h/openai/chat/completions?api-version=2024",
        ),
        ("https://h/deploy?api-version=2024", "https://h/deploy/chat/completions?api-version=2024"),
    ],
)
def test_endpoint_is_a_base_url_or_the_full_url(endpoint: str, url: str) -> None:
    assert chat_completions_url(endpoint) == url


# --------------------------------------------------------------------------
# Success
# --------------------------------------------------------------------------


async def test_success_sends_prompt_conversation_and_key(
    llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "s3cret")
    llm.reply("  The user wants retries in fetch().  ", cost=0.0125)
    settings = settings_for(llm, api_key_env=KEY_ENV, max_tokens=512, prompt="configured")

    outcome = await summarize_with_endpoint(settings, ask(custom="be terse"))

    assert outcome.error is None
    assert outcome.summary == "The user wants retries in fetch()."
    assert outcome.cost == 0.0125
    [request] = llm.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer s3cret"
    assert request.headers["content-type"] == "application/json"
    assert request.body == {
        "model": "fake-model",
        "max_tokens": 512,
        "messages": [
            {"role": "system", "content": "be terse"},
            {"role": "user", "content": "Add retries to fetch()."},
            {
                "role": "assistant",
                "content": 'Reading fetch.py\n\n[image]\n\n{"type": "tool_use", "name": "read", '
                '"input": {"path": "fetch.py"}}',
            },
            {"role": "user", "content": "stray system note"},
            {"role": "user", "content": FINAL_REQUEST},
        ],
    }


async def test_configured_prompt_then_default_prompt(llm: FakeLLM) -> None:
    await summarize_with_endpoint(settings_for(llm, prompt="configured"), ask())
    await summarize_with_endpoint(settings_for(llm, prompt="  "), ask(custom=""))
    first, second = (r.body["messages"][0]["content"] for r in llm.requests)
    assert first == "configured"
    assert second == DEFAULT_CONDENSE_PROMPT


async def test_full_url_without_key_model_or_max_tokens(llm: FakeLLM) -> None:
    settings = CondenseSettings(endpoint=llm.completions_url)
    outcome = await summarize_with_endpoint(settings, ask())
    assert outcome.summary == "A summary of the conversation."
    assert outcome.cost == 0.0  # no usage.cost in the answer
    [request] = llm.requests
    assert request.path == "/v1/chat/completions"
    assert "authorization" not in request.headers
    assert "model" not in request.body and "max_tokens" not in request.body


async def test_content_parts_in_the_answer_are_joined(llm: FakeLLM) -> None:
    body = b'{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"text":"b"}]}}]}'
    llm.respond(200, body)
    outcome = await summarize_with_endpoint(settings_for(llm), ask())
    assert (outcome.summary, outcome.error) == ("ab", None)


# --------------------------------------------------------------------------
# Failures: each is an error string, never an exception
# --------------------------------------------------------------------------


async def test_not_configured() -> None:
    outcome = await summarize_with_endpoint(CondenseSettings(), ask())
    assert outcome.error == NOT_CONFIGURED
    assert "contextls.condense.endpoint" in NOT_CONFIGURED


async def test_not_an_http_url() -> None:
    outcome = await summarize_with_endpoint(CondenseSettings(endpoint="ftp://h/v1"), ask())
    assert outcome.error is not None and "http(s) URL" in outcome.error


async def test_missing_api_key_variable_is_reported_before_any_request(
    llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    outcome = await summarize_with_endpoint(settings_for(llm, api_key_env=KEY_ENV), ask())
    assert outcome.error is not None and KEY_ENV in outcome.error
    assert llm.requests == []


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_a_redirect_is_a_failure_and_the_key_goes_nowhere_else(
    llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-the-users-own-key")
    with FakeLLM() as elsewhere:
        elsewhere.reply("a summary from a host nobody named")
        llm.redirect(status, f"{elsewhere.base_url}/chat/completions")
        outcome = await summarize_with_endpoint(settings_for(llm, api_key_env=KEY_ENV), ask())
        assert elsewhere.requests == []
    assert outcome.summary == ""
    assert outcome.error is not None
    assert f"HTTP {status}" in outcome.error and "does not follow" in outcome.error
    assert llm.requests[0].headers["authorization"] == "Bearer sk-the-users-own-key"


async def test_http_500(llm: FakeLLM) -> None:
    llm.fail(500, "model overloaded")
    outcome = await summarize_with_endpoint(settings_for(llm), ask())
    assert outcome.error is not None
    assert "HTTP 500" in outcome.error
    assert "model overloaded" in outcome.error
    assert outcome.summary == ""


async def test_an_endpoint_that_never_answers_times_out(llm: FakeLLM) -> None:
    llm.reply("too late", delay=60)
    started = time.monotonic()
    outcome = await summarize_with_endpoint(settings_for(llm, timeout=0.5), ask())
    print(f"timed out after {time.monotonic() - started:.2f}s (timeout 0.5s)")
    assert outcome.error is not None and "did not answer within 0.5s" in outcome.error


async def test_a_trickling_endpoint_is_cut_off_and_frees_its_thread(llm: FakeLLM) -> None:
    """One byte every 0.3 s never trips a socket timeout: the deadline is for the whole
    exchange, and the thread stops there. Eight such calls (more than the executor's
    threads here) and then a call to a good endpoint still gets its summary."""
    llm.trickle(b"x" * 65536, every=0.3)
    slow = settings_for(llm, timeout=0.5)
    outcomes = await asyncio.gather(*(summarize_with_endpoint(slow, ask()) for _ in range(8)))
    assert all(o.error and "did not answer within 0.5s" in o.error for o in outcomes), outcomes
    started = time.monotonic()
    while llm.answering and time.monotonic() - started < 30:  # a generous bound, logged
        await asyncio.sleep(0.05)
    print(f"the endpoint saw every request given up {time.monotonic() - started:.2f}s later")
    assert llm.answering == 0, "the client kept reading after its deadline"
    with FakeLLM() as good:
        good.reply("a summary after all")
        outcome = await summarize_with_endpoint(settings_for(good, timeout=5.0), ask())
    assert outcome.error is None and outcome.summary == "a summary after all"


async def test_a_trickled_status_line_is_a_timeout_not_a_bad_status_line(llm: FakeLLM) -> None:
    llm.trickle_status_line(every=0.3)
    outcome = await summarize_with_endpoint(settings_for(llm, timeout=0.5), ask())
    assert outcome.error is not None and "did not answer within 0.5s" in outcome.error
    assert "BadStatusLine" not in outcome.error


@pytest.mark.parametrize("status", [200, 400, 502])
async def test_the_key_never_comes_back_from_an_endpoint_that_echoes_headers(
    llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
    monkeypatch.setenv(KEY_ENV, key)
    llm.echo_headers(status)
    outcome = await summarize_with_endpoint(settings_for(llm, api_key_env=KEY_ENV), ask())
    assert llm.requests[0].headers["authorization"] == f"Bearer {key}"
    said = f"{outcome.summary} {outcome.error}"
    assert "Authorization" in said or "authorization" in said.lower(), said
    assert key not in said and key[:20] not in said, said


async def test_garbage_json(llm: FakeLLM) -> None:
    llm.respond(200, b"<html>not json</html>")
    outcome = await summarize_with_endpoint(settings_for(llm), ask())
    assert outcome.error is not None and "JSON" in outcome.error


@pytest.mark.parametrize(
    "body", [b"[]", b'{"choices": []}', b'{"choices": [{"message": {}}]}', b'{"error": "x"}']
)
async def test_json_without_a_summary(llm: FakeLLM, body: bytes) -> None:
    llm.respond(200, body)
    outcome = await summarize_with_endpoint(settings_for(llm), ask())
    assert outcome.error is not None and "condensing endpoint" in outcome.error


async def test_empty_summary_keeps_the_cost(llm: FakeLLM) -> None:
    llm.reply("   \n", cost=0.5)
    outcome = await summarize_with_endpoint(settings_for(llm), ask())
    assert outcome.error is not None and "empty summary" in outcome.error
    assert outcome.cost == 0.5


@pytest.mark.parametrize("cost", ["0.5", True, -1, None, {"total": 1}])
async def test_unusable_cost_counts_as_zero(llm: FakeLLM, cost: object) -> None:
    answer = {"choices": [{"message": {"content": "s"}}], "usage": {"cost": cost}}
    llm.respond(200, json.dumps(answer).encode())
    outcome = await summarize_with_endpoint(settings_for(llm), ask())
    assert (outcome.summary, outcome.cost, outcome.error) == ("s", 0.0, None)


async def test_unreachable_endpoint() -> None:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = CondenseSettings(endpoint=f"http://127.0.0.1:{port}/v1", timeout=2)
    outcome = await summarize_with_endpoint(settings, ask())
    assert outcome.error is not None and "could not reach" in outcome.error


# --------------------------------------------------------------------------
# The prepareConversation service
# --------------------------------------------------------------------------


def chars(text: str) -> int:
    return len(text)


def long_conversation(n: int = 8, size: int = 1000) -> list[dict[str, Any]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{i}" * size, "ts": i}
        for i in range(n)
    ]


def params(**overrides: Any) -> PrepareConversationParams:
    values: dict[str, Any] = {
        "messages": long_conversation(),
        "context_window": 10_000,
        "max_tokens": 1000,  # allowed = 8,000; the 8 messages count 8,000
        "auto_condense_context": True,
        "auto_condense_context_percent": 50,
    }
    values.update(overrides)
    return PrepareConversationParams(**values)


async def test_service_condenses_through_the_endpoint(llm: FakeLLM) -> None:
    llm.reply("summary of turns 0-4", cost=0.02)
    p = params()
    result = await prepare_conversation(p, settings_for(llm), chars)
    assert result.error is None
    assert result.summary == "summary of turns 0-4"
    assert result.cost == 0.02
    assert result.prev_context_tokens == 8000
    assert result.new_context_tokens == 1000 + len("summary of turns 0-4") + 3000
    assert [m.get("ts") for m in result.messages] == [0, 5, 5, 6, 7]
    assert result.messages[1]["isSummary"] is True
    assert (result.truncated, result.removed_count) == (True, 4)
    # The summariser saw the older messages, not the kept ones.
    sent = llm.requests[0].body["messages"]
    assert len(sent) == 1 + 5 + 1


async def test_service_without_endpoint_reports_and_falls_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    p = params(total_tokens=9000)  # over the 8,000 allowed
    result = await prepare_conversation(p, CondenseSettings(), chars)
    assert result.error == NOT_CONFIGURED
    assert result.summary == ""
    # 7 messages after the first: floor(3.5) = 3, rounded down to even = 2.
    assert [m["ts"] for m in result.messages] == [0, 3, 4, 5, 6, 7]
    assert (result.truncated, result.removed_count) == (True, 2)
    assert any(NOT_CONFIGURED in r.getMessage() for r in caplog.records)


async def test_service_http_error_keeps_error_and_falls_back(llm: FakeLLM) -> None:
    llm.fail(503, "busy")
    result = await prepare_conversation(params(total_tokens=9000), settings_for(llm), chars)
    assert result.error is not None and "HTTP 503" in result.error
    assert result.truncated


async def test_service_logs_and_returns_threshold_warnings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    p = params(
        auto_condense_context=False,
        profile_thresholds={"default": 30},
        messages=long_conversation(2, 10),
    )
    result = await prepare_conversation(p, CondenseSettings(), chars)
    assert len(result.warnings) == 1
    assert any("profile threshold 30" in r.getMessage() for r in caplog.records)


async def test_service_rejects_malformed_messages_with_a_path() -> None:
    p = params(messages=[{"role": "user", "content": "ok"}, {"role": "user", "content": 3}])
    with pytest.raises(ConversationParamsError) as info:
        await prepare_conversation(p, CondenseSettings(), chars)
    assert info.value.path == "$.messages[1].content"


async def test_make_summarizer_binds_the_settings(llm: FakeLLM) -> None:
    summarize = make_summarizer(settings_for(llm))
    outcome = await summarize(ask())
    assert outcome.summary == "A summary of the conversation."


async def test_service_round_trips_the_wire_format() -> None:
    wire: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": "a" * 10, "ts": 1},
            {"role": "assistant", "content": [{"type": "text", "text": "b" * 10}]},
            {"role": "user", "content": "c" * 10, "isSummary": False},
            {"role": "assistant", "content": "d" * 10},
            {"role": "user", "content": "e" * 10},
        ],
        "contextWindow": 100_000,
        "totalTokens": 81_800,
        "maxTokens": 8192,
    }
    p = msgspec.convert(wire, PrepareConversationParams)
    result = msgspec.to_builtins(await prepare_conversation(p, CondenseSettings(), chars))
    assert result["prevContextTokens"] == 81_810  # over 81,808 by two
    assert result["truncated"] is True
    assert result["removedCount"] == 2
    assert result["messages"] == [wire["messages"][0], *wire["messages"][3:]]
    assert result["summary"] == "" and result["cost"] == 0.0
    assert result["error"] is None and result["newContextTokens"] is None
