"""``contextls/prepareConversation`` end to end: the real server over stdio.

Roo Code's conversation sliding window (``truncateConversationIfNeeded``) as
an LSP request: the worked examples and the allowedTokens boundary from the
spec, token estimates, per-profile thresholds, condensing against a fake
OpenAI-compatible endpoint (success, HTTP error, timeout, garbage) and
-32602 for malformed params. Every expectation is checked through the
request against a running server; token counts come from the server's own
``contextls/countTokens`` so the tests do not depend on the tokenizer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types as lsp

from tests.e2e.conftest import SERVER, Session, Starter, open_session, stop
from tests.support.fake_llm import FakeLLM

PREPARE = "contextls/prepareConversation"
INVALID_PARAMS = -32602
API_KEY_ENV = "CONTEXTLS_E2E_CONDENSE_KEY"
API_KEY = "sk-e2e-secret-1234"

# contextWindow 100000 with maxTokens 30000 leaves 100000 * 0.9 - 30000 = 60000.
WINDOW = 100_000
RESERVED = 30_000
ALLOWED = 60_000


# The request is stateless, so the tests that need no special settings share
# one server (a server start costs most of a second).
shared_loop = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Session]:
    root = tmp_path_factory.mktemp("project").resolve()
    storage = tmp_path_factory.mktemp("state") / "contextls.sqlite3"
    session = await open_session(SERVER, root, [root], {"storage": str(storage)})
    try:
        yield session
    finally:
        await stop(session)


def conversation(count: int, words: str = "message") -> list[dict[str, Any]]:
    """``count`` alternating user/assistant messages, each with a ``ts``."""
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"{words} number {i + 1}",
            "ts": 1_700_000_000_000 + i,
        }
        for i in range(count)
    ]


async def prepare(session: Session, messages: Any, **params: Any) -> dict[str, Any]:
    result = await session.call(PREPARE, messages=messages, **params)
    assert isinstance(result, dict), result
    return result


async def tokens(session: Session, text: str) -> int:
    result = await session.call("contextls/countTokens", text=text)
    return int(result["tokens"])


# --------------------------------------------------------------------------
# The sliding window
# --------------------------------------------------------------------------


@shared_loop
async def test_worked_examples_drop_an_even_number_after_the_first(shared: Session) -> None:
    five = conversation(5)
    result = await prepare(
        shared,
        five,
        contextWindow=WINDOW,
        maxTokens=RESERVED,
        totalTokens=ALLOWED + 1_000,
        autoCondenseContext=False,
    )
    # 4 after the first * 0.5 = 2 removed: [1, 4, 5]; ts and all keys intact.
    assert result["messages"] == [five[0], five[3], five[4]]
    assert result["truncated"] is True
    assert result["removedCount"] == 2
    assert result["summary"] == ""
    assert result["cost"] == 0
    assert result["error"] is None
    assert result["newContextTokens"] is None

    seven = conversation(7)
    result = await prepare(
        shared,
        seven,
        contextWindow=WINDOW,
        maxTokens=RESERVED,
        totalTokens=ALLOWED + 1_000,
        autoCondenseContext=False,
    )
    # 6 after the first * 0.5 = 3, rounded down to 2: [1, 4, 5, 6, 7].
    assert result["messages"] == [seven[0], *seven[3:]]
    assert result["removedCount"] == 2
    assert result["truncated"] is True


@shared_loop
async def test_under_budget_returns_the_messages_unchanged(shared: Session) -> None:
    seven = conversation(7)
    seven[2]["extra"] = {"nested": [1, 2, {"deep": None}]}
    seven[4]["isSummary"] = False
    result = await prepare(shared, seven, contextWindow=WINDOW, maxTokens=RESERVED, totalTokens=100)
    assert result["messages"] == seven
    assert result["truncated"] is False
    assert result["removedCount"] == 0
    assert result["error"] is None
    assert result["warnings"] == []


@shared_loop
async def test_empty_messages_give_an_empty_result(shared: Session) -> None:
    result = await prepare(shared, [], contextWindow=WINDOW)
    assert result["messages"] == []
    assert result["truncated"] is False
    assert result["removedCount"] == 0
    assert result["summary"] == ""
    assert result["error"] is None


@shared_loop
async def test_decision_boundary_is_prev_context_above_allowed(shared: Session) -> None:
    messages = conversation(5)
    last = await tokens(shared, messages[-1]["content"])
    assert last > 0

    at_limit = await prepare(
        shared,
        messages,
        contextWindow=WINDOW,
        maxTokens=RESERVED,
        totalTokens=ALLOWED - last,
        autoCondenseContext=False,
    )
    assert at_limit["prevContextTokens"] == ALLOWED
    assert at_limit["messages"] == messages
    assert at_limit["truncated"] is False

    over = await prepare(
        shared,
        messages,
        contextWindow=WINDOW,
        maxTokens=RESERVED,
        totalTokens=ALLOWED + 1 - last,
        autoCondenseContext=False,
    )
    assert over["prevContextTokens"] == ALLOWED + 1
    assert over["messages"] == [messages[0], messages[3], messages[4]]
    assert over["truncated"] is True


@shared_loop
async def test_max_tokens_omitted_or_zero_reserves_8192(shared: Session) -> None:
    allowed = 90_000 - 8_192
    messages = conversation(5)
    last = await tokens(shared, messages[-1]["content"])
    for reserved in ({}, {"maxTokens": 0}):
        at_limit = await prepare(
            shared, messages, contextWindow=WINDOW, totalTokens=allowed - last, **reserved
        )
        assert at_limit["prevContextTokens"] == allowed, reserved
        assert at_limit["truncated"] is False, reserved
        assert at_limit["messages"] == messages, reserved

        over = await prepare(
            shared, messages, contextWindow=WINDOW, totalTokens=allowed + 1 - last, **reserved
        )
        assert over["prevContextTokens"] == allowed + 1, reserved
        assert over["truncated"] is True, reserved
        assert over["messages"] == [messages[0], messages[3], messages[4]], reserved


@shared_loop
async def test_total_tokens_omitted_counts_every_message(shared: Session) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Refactor the parser to use a table of handlers."},
        {"role": "assistant", "content": "Done: see parser.py, the dispatch is now a dict."},
        {"role": "user", "content": [{"type": "text", "text": "Now add tests for it."}]},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "And run them, please. " * 20},
    ]
    expected = 0
    for message in messages:
        content = message["content"]
        text = content if isinstance(content, str) else content[0]["text"]
        expected += await tokens(shared, text) if text else 0

    result = await prepare(shared, messages, contextWindow=WINDOW)
    assert result["prevContextTokens"] == expected
    assert result["messages"] == messages
    assert result["truncated"] is False


@shared_loop
async def test_image_block_estimate(shared: Session) -> None:
    text_only = {"role": "user", "content": [{"type": "text", "text": "What is in this picture?"}]}
    with_image = {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this picture?"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "X" * 1000},
            },
        ],
    }
    base = await prepare(shared, [text_only], contextWindow=WINDOW, totalTokens=0)
    result = await prepare(shared, [with_image], contextWindow=WINDOW, totalTokens=0)
    # ceil(sqrt(1000)) * 1.5 = 32 * 1.5 = 48
    assert result["prevContextTokens"] - base["prevContextTokens"] == 48
    assert base["prevContextTokens"] == await tokens(shared, "What is in this picture?")
    assert result["messages"] == [with_image]


@shared_loop
async def test_unknown_blocks_are_estimated_not_fatal(shared: Session) -> None:
    odd = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text"}]},
            {"type": "thinking"},
            {"no_type": True},
            {"type": "text", "text": 42},
            {"type": "image", "source": "not an object"},
            "a bare string block",
            7,
            None,
        ],
        "ts": 5,
    }
    messages = [{"role": "user", "content": "start"}, odd, {"role": "user", "content": "go on"}]
    result = await prepare(shared, messages, contextWindow=WINDOW)
    assert result["messages"] == messages
    assert result["prevContextTokens"] > 0
    assert result["error"] is None
    # The server is fine afterwards.
    assert (await shared.call("contextls/status"))["itemCount"] == 0


# --------------------------------------------------------------------------
# Profile thresholds (no condensing endpoint configured)
# --------------------------------------------------------------------------


@shared_loop
async def test_profile_thresholds(shared: Session) -> None:
    # maxTokens 10000: allowed = 80000, so a 65% context is not over budget
    # and only the threshold decides whether condensing is attempted.
    messages = conversation(6)
    last = await tokens(shared, messages[-1]["content"])

    async def at(percent: int, global_percent: float, profile: float | None) -> dict[str, Any]:
        thresholds = {} if profile is None else {"code": profile, "other": 55}
        return await prepare(
            shared,
            messages,
            contextWindow=WINDOW,
            maxTokens=10_000,
            totalTokens=percent * 1_000 - last,
            autoCondenseContext=True,
            autoCondenseContextPercent=global_percent,
            profileThresholds=thresholds,
            currentProfileId="code",
        )

    # -1 inherits the global 80%: 65% does not trigger condensing.
    inherit = await at(65, 80, -1)
    assert inherit["prevContextTokens"] == 65_000
    assert inherit["error"] is None
    assert inherit["messages"] == messages
    assert inherit["warnings"] == []

    # A valid profile threshold (60) beats the global 80: condensing is
    # attempted, fails as not configured, and under budget nothing is dropped.
    profile = await at(65, 80, 60)
    assert profile["error"] is not None
    assert "not configured" in profile["error"]
    assert profile["messages"] == messages
    assert profile["truncated"] is False
    assert profile["summary"] == ""
    assert profile["cost"] == 0

    # Over the allowed 80000, the failed condense falls back to the window.
    over = await at(85, 80, 60)
    assert "not configured" in (over["error"] or "")
    assert over["truncated"] is True
    # 5 after the first * 0.5 = 2.5 -> 2 removed.
    assert over["messages"] == [messages[0], *messages[3:]]

    # Invalid 150 falls back to the global 60: 65% condenses, with a warning.
    too_high = await at(65, 60, 150)
    assert "not configured" in (too_high["error"] or "")
    assert any("150" in warning for warning in too_high["warnings"]), too_high["warnings"]
    assert too_high["messages"] == messages

    # Invalid 40 falls back to the global 80: 65% does not condense.
    too_low = await at(65, 80, 40)
    assert too_low["error"] is None
    assert any("40" in warning for warning in too_low["warnings"]), too_low["warnings"]

    # No threshold for this profile: the global one.
    absent = await at(65, 60, None)
    assert "not configured" in (absent["error"] or "")
    assert absent["warnings"] == []


# --------------------------------------------------------------------------
# Condensing against the fake endpoint
# --------------------------------------------------------------------------


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def condensing(
    start: Starter, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Awaitable[Session]]:
    """Start a server whose condense endpoint is ``llm``; the server process
    inherits the API key from this process's environment."""
    monkeypatch.setenv(API_KEY_ENV, API_KEY)

    async def starter(**overrides: Any) -> Session:
        condense = {
            "endpoint": llm.base_url,
            "model": "fake-model",
            "apiKeyEnv": API_KEY_ENV,
            "timeout": 5,
            **overrides,
        }
        return await start({"condense": condense})

    return starter


def chat(count: int) -> list[dict[str, Any]]:
    """A conversation whose older turns are worth summarising."""
    messages = conversation(count, "a long discussion of the parser refactoring " * 5)
    for i, message in enumerate(messages):
        message["content"] = f"turn {i + 1}: {message['content']}"
    return messages


OVER_BUDGET = {
    "contextWindow": WINDOW,
    "maxTokens": RESERVED,
    "totalTokens": ALLOWED + 5_000,
    "autoCondenseContext": True,
    "autoCondenseContextPercent": 100,
}


async def test_condensing_success(
    condensing: Callable[..., Awaitable[Session]], llm: FakeLLM
) -> None:
    session = await condensing()
    # A slow (but in time) answer, to see that the server is not blocked meanwhile.
    llm.reply("  The user asked for a parser refactoring; it is half done.  ", cost=0.25, delay=0.5)
    messages = chat(8)
    await tokens(session, "warm up the tokenizer")

    pending = asyncio.ensure_future(
        prepare(
            session,
            messages,
            contextWindow=WINDOW,
            maxTokens=10_000,
            totalTokens=70_000,
            autoCondenseContext=True,
            autoCondenseContextPercent=60,
        )
    )
    await session.wait_for(lambda: len(llm.requests) == 1)
    assert await tokens(session, "still answering") > 0
    assert not pending.done(), "countTokens waited for the condensing call"
    result = await pending

    assert result["error"] is None
    assert result["summary"] == "The user asked for a parser refactoring; it is half done."
    assert result["cost"] == pytest.approx(0.25)
    summary = {
        "role": "assistant",
        "content": result["summary"],
        "isSummary": True,
        "ts": messages[5]["ts"],
    }
    assert result["messages"] == [messages[0], summary, *messages[5:]]
    assert result["truncated"] is True
    assert result["removedCount"] == 4
    last = await tokens(session, messages[-1]["content"])
    assert result["prevContextTokens"] == 70_000 + last
    expected_new = 0
    for message in result["messages"]:
        expected_new += await tokens(session, message["content"])
    assert result["newContextTokens"] == expected_new
    assert result["newContextTokens"] < result["prevContextTokens"]

    assert len(llm.requests) == 1
    request = llm.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.body["model"] == "fake-model"
    sent = [m["content"] for m in request.body["messages"]]
    assert request.body["messages"][0]["role"] == "system"
    for message in messages[:5]:
        assert message["content"] in sent
    for message in messages[5:]:
        assert message["content"] not in sent


async def test_condensing_http_500_falls_back(
    condensing: Callable[..., Awaitable[Session]], llm: FakeLLM
) -> None:
    session = await condensing()
    llm.fail(500, "the model is on fire")
    messages = chat(8)

    result = await prepare(session, messages, **OVER_BUDGET)
    assert result["error"] is not None
    assert "500" in result["error"]
    assert "the model is on fire" in result["error"]
    assert result["summary"] == ""
    assert result["cost"] == 0
    assert result["newContextTokens"] is None
    # 7 after the first * 0.5 = 3.5 -> 2 removed.
    assert result["messages"] == [messages[0], *messages[3:]]
    assert result["truncated"] is True
    assert result["removedCount"] == 2
    assert len(llm.requests) == 1

    # Above the threshold but within budget: the error, and nothing dropped.
    within = await prepare(
        session,
        messages,
        contextWindow=WINDOW,
        maxTokens=RESERVED,
        totalTokens=50_000,
        autoCondenseContext=True,
        autoCondenseContextPercent=50,
    )
    assert "500" in (within["error"] or "")
    assert within["messages"] == messages
    assert within["truncated"] is False

    status = await session.call("contextls/status")
    assert status["itemCount"] == 0


async def test_condensing_timeout_is_bounded(
    condensing: Callable[..., Awaitable[Session]], llm: FakeLLM
) -> None:
    session = await condensing(timeout=0.5)
    llm.reply("too late", delay=60)  # the test's teardown wakes it
    messages = chat(8)
    await tokens(session, "warm up the tokenizer")

    result = await prepare(session, messages, **OVER_BUDGET)

    # The answer came while the endpoint was still sitting on its reply: the timeout, not
    # the endpoint, ended the wait.
    assert len(llm.requests) == 1 and llm.answered == 0
    assert result["error"] is not None
    assert "0.5" in result["error"]
    assert "timeout" in result["error"] or "did not answer" in result["error"]
    assert result["summary"] == ""
    assert result["messages"] == [messages[0], *messages[3:]]
    assert result["truncated"] is True
    # The server still answers promptly.
    assert (await session.call("contextls/status"))["itemCount"] == 0


async def test_condensing_garbage_json_falls_back(
    condensing: Callable[..., Awaitable[Session]], llm: FakeLLM
) -> None:
    session = await condensing()
    messages = chat(8)
    for body in (b"{this is not json", b"\xff\xfe\x00garbage", b"[1, 2, 3]", b'{"choices": []}'):
        llm.respond(200, body)
        result = await prepare(session, messages, **OVER_BUDGET)
        assert result["error"], body
        assert result["summary"] == "", body
        assert result["messages"] == [messages[0], *messages[3:]], body
        assert result["truncated"] is True, body
    assert len(llm.requests) == 4


async def test_condensing_refusals_still_fall_back(
    condensing: Callable[..., Awaitable[Session]], llm: FakeLLM
) -> None:
    session = await condensing()

    # Four messages: nothing between the first and the three kept to
    # summarise, so no request is sent; and the window (3 * 0.5 -> 0 to
    # drop) cannot help either, which is a warning, not a failure.
    four = chat(4)
    few = await prepare(session, four, **OVER_BUDGET)
    assert few["error"]
    assert llm.requests == []
    assert few["messages"] == four
    assert few["truncated"] is False
    assert few["warnings"]

    # A summary larger than what it replaces is refused, but its cost is real.
    messages = chat(8)
    llm.reply("word " * 2_000, cost=0.125)
    budget = {**OVER_BUDGET, "contextWindow": 1_000, "maxTokens": 500, "totalTokens": 450}
    bigger = await prepare(session, messages, **budget)
    assert bigger["error"]
    assert "smaller" in bigger["error"]
    assert bigger["cost"] == pytest.approx(0.125)
    assert bigger["summary"] == ""
    assert bigger["newContextTokens"] is None
    assert bigger["messages"] == [messages[0], *messages[3:]]
    assert len(llm.requests) == 1

    # A blank summary is an error too.
    llm.reply("   \n  ", cost=0.0625)
    blank = await prepare(session, messages, **OVER_BUDGET)
    assert blank["error"]
    assert blank["summary"] == ""
    assert blank["cost"] == pytest.approx(0.0625)
    assert blank["messages"] == [messages[0], *messages[3:]]


def configure(session: Session, settings: dict[str, Any]) -> None:
    # pygls' client serialises notifications of standard LSP methods with
    # lsprotocol's converter, so the params must be the lsprotocol type.
    session.notify(
        "workspace/didChangeConfiguration", lsp.DidChangeConfigurationParams(settings=settings)
    )


async def test_condense_settings_change_at_runtime(
    start: Starter, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(API_KEY_ENV, API_KEY)
    session = await start()
    messages = chat(8)

    before = await prepare(session, messages, **OVER_BUDGET)
    assert "not configured" in (before["error"] or "")
    assert llm.requests == []

    condense = {"endpoint": llm.base_url, "model": "fake-model", "apiKeyEnv": API_KEY_ENV}
    configure(session, {"condense": condense})
    llm.reply("A summary.", cost=0.5)
    after = await prepare(session, messages, **OVER_BUDGET)
    assert after["error"] is None
    assert after["summary"] == "A summary."
    assert after["cost"] == pytest.approx(0.5)
    assert len(llm.requests) == 1

    # An apiKeyEnv naming an unset variable: an error, and no request is sent.
    missing = {**condense, "apiKeyEnv": API_KEY_ENV + "_UNSET"}
    monkeypatch.delenv(API_KEY_ENV + "_UNSET", raising=False)
    configure(session, {"condense": missing})
    unset = await prepare(session, messages, **OVER_BUDGET)
    assert API_KEY_ENV + "_UNSET" in (unset["error"] or "")
    assert unset["messages"] == [messages[0], *messages[3:]]
    assert len(llm.requests) == 1


# --------------------------------------------------------------------------
# Malformed params
# --------------------------------------------------------------------------

GOOD = [{"role": "user", "content": "hello"}]

MALFORMED: list[tuple[str, dict[str, Any], str]] = [
    ("missing contextWindow", {"messages": GOOD}, "contextWindow"),
    ("contextWindow 0", {"messages": GOOD, "contextWindow": 0}, "contextWindow"),
    ("contextWindow negative", {"messages": GOOD, "contextWindow": -5}, "contextWindow"),
    ("contextWindow a string", {"messages": GOOD, "contextWindow": "big"}, "contextWindow"),
    ("missing messages", {"contextWindow": WINDOW}, "messages"),
    ("messages not a list", {"messages": "hello", "contextWindow": WINDOW}, "messages"),
    ("message not an object", {"messages": ["hello"], "contextWindow": WINDOW}, "messages[0]"),
    (
        "message without role",
        {"messages": [{"content": "hello"}], "contextWindow": WINDOW},
        "$.messages[0].role",
    ),
    (
        "role not a string",
        {"messages": [{"role": 1, "content": "hello"}], "contextWindow": WINDOW},
        "$.messages[0].role",
    ),
    (
        "second message without content",
        {"messages": [*GOOD, {"role": "assistant"}], "contextWindow": WINDOW},
        "$.messages[1].content",
    ),
    (
        "content a number",
        {"messages": [{"role": "user", "content": 42}], "contextWindow": WINDOW},
        "$.messages[0].content",
    ),
    (
        "content an object",
        {"messages": [{"role": "user", "content": {"text": "x"}}], "contextWindow": WINDOW},
        "$.messages[0].content",
    ),
    (
        "totalTokens negative",
        {"messages": GOOD, "contextWindow": WINDOW, "totalTokens": -1},
        "totalTokens",
    ),
    (
        "maxTokens negative",
        {"messages": GOOD, "contextWindow": WINDOW, "maxTokens": -1},
        "maxTokens",
    ),
    (
        "autoCondenseContext not a boolean",
        {"messages": GOOD, "contextWindow": WINDOW, "autoCondenseContext": "yes"},
        "autoCondenseContext",
    ),
]


@shared_loop
async def test_malformed_params_are_invalid_params_naming_the_field(shared: Session) -> None:
    problems = []
    for name, params, field in MALFORMED:
        error = await shared.raw_error(PREPARE, params)
        if error.code != INVALID_PARAMS or field not in error.message:
            problems.append(f"{name}: {error.code} {error.message!r} (wanted {field!r})")
    assert not problems, "\n".join(problems)

    # After all that the request still works.
    result = await prepare(shared, GOOD, contextWindow=WINDOW)
    assert result["messages"] == GOOD
    assert result["prevContextTokens"] == await tokens(shared, "hello")
