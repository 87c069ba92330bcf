"""Roo Code's conversation sliding window (contextls.core.conversation).

Most tests count one token per character (``chars``) so the arithmetic is
visible; the real-tokenizer tests use tiktoken's o200k_base.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from contextls.core.condensing import CONDENSED_RECENTLY, NOT_ENOUGH_MESSAGES
from contextls.core.conversation import (
    DEFAULT_RESERVED_TOKENS,
    ConversationParamsError,
    Message,
    SummaryOutcome,
    SummaryRequest,
    TruncateResult,
    estimate_content_tokens,
    truncate_conversation,
    truncate_conversation_if_needed,
)
from contextls.core.conversation_messages import IMAGE_WITHOUT_DATA_TOKENS
from contextls.core.errors import InvalidParams
from tests.support.offline_tiktoken import encoding


def chars(text: str) -> int:
    """One token per character: deterministic and easy to reason about."""
    return len(text)


def conversation(*sizes: int) -> list[Message]:
    """Alternating user/assistant messages whose contents have these sizes."""
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": "x" * size, "ts": i}
        for i, size in enumerate(sizes)
    ]


def numbered(n: int) -> list[int]:
    return list(range(1, n + 1))


class FakeSummarizer:
    """An async summariser that records its requests and answers as told."""

    def __init__(self, outcome: SummaryOutcome | None = None, raises: bool = False) -> None:
        self.outcome = outcome or SummaryOutcome(summary="short summary", cost=0.5)
        self.raises = raises
        self.requests: list[SummaryRequest] = []

    async def __call__(self, request: SummaryRequest) -> SummaryOutcome:
        self.requests.append(request)
        if self.raises:
            raise RuntimeError("boom")
        return self.outcome


async def prepare(messages: list[Message], **options: Any) -> TruncateResult:
    options.setdefault("count_text", chars)
    options.setdefault("context_window", 100_000)
    return await truncate_conversation_if_needed(messages, **options)


# --------------------------------------------------------------------------
# truncate_conversation
# --------------------------------------------------------------------------


def test_five_messages_at_half_keep_first_and_last_two() -> None:
    assert truncate_conversation(numbered(5), 0.5) == [1, 4, 5]


def test_seven_messages_at_half_remove_two_as_the_code_computes() -> None:
    # 6 * 0.5 = 3, rounded down to even = 2 (seed 001's prose says 3; the code says 2).
    assert truncate_conversation(numbered(7), 0.5) == [1, 4, 5, 6, 7]


def test_seven_messages_at_point_three_remove_nothing() -> None:
    # floor(6 * 0.3) = 1, rounded down to even = 0.
    assert truncate_conversation(numbered(7), 0.3) == numbered(7)


@pytest.mark.parametrize(
    ("n", "frac", "removed"),
    [(4, 1.0, 2), (6, 1.0, 4), (9, 0.5, 4), (10, 0.5, 4), (11, 0.5, 4), (12, 0.5, 4), (13, 0.5, 6)],
)
def test_removed_count_is_rounded_down_to_even(n: int, frac: float, removed: int) -> None:
    result = truncate_conversation(numbered(n), frac)
    assert len(result) == n - removed
    assert result == [1, *numbered(n)[1 + removed :]]


@pytest.mark.parametrize("frac", [0.0, 0.3, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 21])
def test_first_message_is_always_kept(n: int, frac: float) -> None:
    result = truncate_conversation(numbered(n), frac)
    assert result[0] == 1
    assert (n - len(result)) % 2 == 0
    assert result[1:] == numbered(n)[n - len(result) + 1 :]


def test_empty_one_and_two_messages() -> None:
    assert truncate_conversation([], 0.5) == []
    assert truncate_conversation(["a"], 0.5) == ["a"]
    assert truncate_conversation(["a", "b"], 0.5) == ["a", "b"]


def test_truncation_returns_a_new_list_and_leaves_the_input_alone() -> None:
    messages = numbered(5)
    result = truncate_conversation(messages, 0.5)
    assert messages == numbered(5)
    assert result is not messages


@pytest.mark.parametrize("frac", [-0.1, 1.5])
def test_fraction_outside_zero_to_one_is_refused(frac: float) -> None:
    with pytest.raises(ValueError, match="frac_to_remove"):
        truncate_conversation(numbered(5), frac)


# --------------------------------------------------------------------------
# estimate_content_tokens
# --------------------------------------------------------------------------


def image(data: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def test_string_content_counts_its_text() -> None:
    assert estimate_content_tokens("hello", chars) == 5


@pytest.mark.parametrize("content", ["", [], None])
def test_empty_content_is_zero(content: object) -> None:
    assert estimate_content_tokens(content, chars) == 0


def test_text_blocks_are_summed() -> None:
    content = [{"type": "text", "text": "abc"}, {"type": "text", "text": "de"}]
    assert estimate_content_tokens(content, chars) == 5


@pytest.mark.parametrize(
    ("length", "tokens"),
    [(1000, 48), (0, 0), (10, 6), (1, 2), (4, 3), (9, 5), (5, 5), (16, 6)],
)
def test_image_estimate_is_ceil_sqrt_times_one_and_a_half(length: int, tokens: int) -> None:
    # 1000 -> ceil(31.6) = 32 -> 48; 5 -> 3 * 1.5 = 4.5 -> 5 (rounded up at the end).
    assert estimate_content_tokens([image("X" * length)], chars) == tokens


def test_image_halves_are_summed_before_rounding() -> None:
    # Two 5-byte images: 4.5 + 4.5 = 9, not 5 + 5.
    assert estimate_content_tokens([image("XXXXX"), image("XXXXX")], chars) == 9


def test_mixed_text_and_image() -> None:
    content = [{"type": "text", "text": "abcd"}, image("X" * 1000)]
    assert estimate_content_tokens(content, chars) == 52


def test_image_without_base64_data_gets_the_conservative_estimate() -> None:
    url_image = {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}
    assert estimate_content_tokens([url_image], chars) == IMAGE_WITHOUT_DATA_TOKENS
    assert estimate_content_tokens([{"type": "image"}], chars) == IMAGE_WITHOUT_DATA_TOKENS


def test_unknown_block_types_count_their_sorted_json_text() -> None:
    block = {"type": "tool_use", "name": "read_file", "input": {"path": "a.py"}}
    expected = len(json.dumps(block, sort_keys=True, ensure_ascii=False))
    assert estimate_content_tokens([block], chars) == expected


@pytest.mark.parametrize(
    "block",
    [42, "loose string", None, [1, 2], {"no": "type"}, {"type": "text", "text": 7}, {"type": 3}],
)
def test_malformed_blocks_count_their_json_text_and_never_crash(block: object) -> None:
    expected = len(json.dumps(block, sort_keys=True, ensure_ascii=False))
    assert estimate_content_tokens([block], chars) == expected


def test_unserialisable_values_do_not_crash() -> None:
    weird = {1: "a", "b": object()}  # mixed keys cannot be sorted
    assert estimate_content_tokens([weird], chars) > 0


def test_real_tiktoken_counts_text_blocks() -> None:
    enc = encoding("o200k_base")
    text = "The quick brown fox jumps over the lazy dog."
    content = [{"type": "text", "text": text}, image("X" * 1000)]
    count = lambda s: len(enc.encode(s))  # noqa: E731
    assert estimate_content_tokens(content, count) == len(enc.encode(text)) + 48
    assert len(enc.encode("hello world")) == 2  # the real tokenizer, not a stand-in


# --------------------------------------------------------------------------
# truncate_conversation_if_needed: arithmetic and the sliding window
# --------------------------------------------------------------------------


async def test_empty_messages_give_an_empty_result() -> None:
    result = await prepare([])
    assert result.messages == []
    assert (result.summary, result.cost, result.prev_context_tokens) == ("", 0.0, 0)
    assert (result.truncated, result.removed_count, result.error) == (False, 0, None)


@pytest.mark.parametrize(
    ("window", "max_tokens", "allowed"),
    [(200_000, 8192, 171_808), (128_000, 4096, 111_104), (100_000, None, 81_808)],
)
async def test_boundary_on_both_sides_of_allowed_tokens(
    window: int, max_tokens: int | None, allowed: int
) -> None:
    messages = conversation(10, 10, 10, 10, 10)  # the last message counts 10
    at = await prepare(
        messages, context_window=window, max_tokens=max_tokens, total_tokens=allowed - 10
    )
    assert at.prev_context_tokens == allowed
    assert at.messages == messages
    assert not at.truncated

    over = await prepare(
        messages, context_window=window, max_tokens=max_tokens, total_tokens=allowed - 9
    )
    assert over.prev_context_tokens == allowed + 1
    assert over.messages == [messages[0], messages[3], messages[4]]
    assert (over.truncated, over.removed_count) == (True, 2)
    assert (over.summary, over.cost, over.error, over.new_context_tokens) == ("", 0.0, None, None)


@pytest.mark.parametrize("max_tokens", [0, None])
async def test_missing_or_zero_max_tokens_reserve_8192(max_tokens: int | None) -> None:
    assert DEFAULT_RESERVED_TOKENS == 8192
    messages = conversation(1, 1, 1, 1, 1)
    allowed = 100_000 * 0.9 - 8192  # 81,808
    ok = await prepare(messages, max_tokens=max_tokens, total_tokens=int(allowed) - 1)
    over = await prepare(messages, max_tokens=max_tokens, total_tokens=int(allowed))
    assert not ok.truncated
    assert over.truncated


async def test_last_message_is_counted_into_prev_context_tokens() -> None:
    messages = conversation(5, 5, 0)
    messages[-1]["content"] = [{"type": "text", "text": "abc"}, image("X" * 1000)]
    result = await prepare(messages, total_tokens=1000)
    assert result.prev_context_tokens == 1000 + 3 + 48


async def test_omitted_total_tokens_counts_every_message_but_the_last() -> None:
    messages = conversation(10, 20, 30, 40)
    result = await prepare(messages)
    assert result.prev_context_tokens == 10 + 20 + 30 + 40


async def test_omitted_total_tokens_with_real_tiktoken() -> None:
    enc = encoding("o200k_base")
    texts = ["Refactor app.py to use asyncio.", "Sure, here is the plan.", "Go ahead."]
    messages = [{"role": "user", "content": t} for t in texts]
    result = await prepare(messages, count_text=lambda s: len(enc.encode(s)))
    assert result.prev_context_tokens == sum(len(enc.encode(t)) for t in texts)
    assert result.prev_context_tokens > 10


async def test_omitted_total_tokens_can_trigger_the_sliding_window() -> None:
    # Window 20,000 with 8,192 reserved allows 9,808; 5 * 2,000 = 10,000 > 9,808.
    messages = conversation(2000, 2000, 2000, 2000, 2000)
    result = await prepare(messages, context_window=20_000)
    assert result.prev_context_tokens == 10_000
    assert result.messages == [messages[0], messages[3], messages[4]]


async def test_kept_messages_are_passed_back_unchanged() -> None:
    messages = conversation(1, 1, 1, 1, 1)
    messages[4]["isSummary"] = False
    messages[4]["custom"] = {"nested": [1, 2]}
    result = await prepare(messages, total_tokens=10**6)
    assert result.messages[-1] is messages[4]
    assert result.messages[-1] == {
        "role": "user",
        "content": "x",
        "ts": 4,
        "isSummary": False,
        "custom": {"nested": [1, 2]},
    }


async def test_too_few_messages_to_truncate_warns() -> None:
    messages = conversation(1, 1)
    result = await prepare(messages, total_tokens=10**6)
    assert result.messages == messages
    assert not result.truncated
    assert any("too few to truncate" in w for w in result.warnings)


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "path"),
    [
        ("not a message", "$.messages[1]"),
        ({"role": 1, "content": "x"}, "$.messages[1].role"),
        ({"role": "user", "content": None}, "$.messages[1].content"),
        ({"role": "user", "content": {"type": "text"}}, "$.messages[1].content"),
        ({"content": "x"}, "$.messages[1].role"),
        ({"role": "user"}, "$.messages[1].content"),
    ],
)
async def test_malformed_messages_raise_with_the_path(bad: object, path: str) -> None:
    messages: list[Any] = [{"role": "user", "content": "ok"}, bad]
    with pytest.raises(ConversationParamsError) as info:
        await prepare(messages)
    assert info.value.path == path
    assert path in str(info.value)
    assert isinstance(info.value, InvalidParams)  # mapped to -32602 by the LSP layer


async def test_context_window_must_be_positive() -> None:
    with pytest.raises(ConversationParamsError) as info:
        await prepare(conversation(1), context_window=0)
    assert info.value.path == "$.contextWindow"


# --------------------------------------------------------------------------
# Thresholds
# --------------------------------------------------------------------------


async def condense_called(
    percent_used: int, global_percent: float, thresholds: dict[str, float]
) -> tuple[bool, list[str]]:
    """Whether condensing is attempted at ``percent_used`` of a 100k window.

    The context stays under allowedTokens (81,808), so only the percentage can
    trigger condensing.
    """
    summarizer = FakeSummarizer()
    messages = conversation(1, 1, 1, 1, 1, 1)
    result = await prepare(
        messages,
        total_tokens=percent_used * 1000 - 1,
        auto_condense_context=True,
        auto_condense_context_percent=global_percent,
        profile_thresholds=thresholds,
        current_profile_id="code",
        summarize=summarizer,
    )
    return bool(summarizer.requests), result.warnings


async def test_profile_threshold_in_range_is_used() -> None:
    assert await condense_called(65, 80, {"code": 60}) == (True, [])
    assert await condense_called(55, 80, {"code": 60}) == (False, [])


async def test_profile_threshold_minus_one_inherits_the_global_one() -> None:
    assert await condense_called(65, 75, {"code": -1}) == (False, [])
    assert await condense_called(75, 75, {"code": -1}) == (True, [])


async def test_absent_profile_threshold_uses_the_global_one() -> None:
    assert await condense_called(65, 75, {"other": 50}) == (False, [])
    assert await condense_called(76, 75, {}) == (True, [])


@pytest.mark.parametrize("invalid", [150, 49, 0, -2, 100.5])
async def test_invalid_profile_threshold_warns_and_uses_the_global_one(invalid: float) -> None:
    called, warnings = await condense_called(65, 75, {"code": invalid})
    assert not called
    assert len(warnings) == 1
    assert "'code'" in warnings[0]
    assert "global threshold 75%" in warnings[0]


async def test_profile_threshold_bounds_are_inclusive() -> None:
    assert (await condense_called(50, 90, {"code": 50}))[0]
    assert (await condense_called(100, 90, {"code": 100}))[0]


async def test_percentage_is_compared_with_greater_or_equal() -> None:
    # 100 * 60,000 / 100,000 = 60 >= 60.
    summarizer = FakeSummarizer()
    await prepare(
        conversation(1, 1, 1, 1, 1, 1),
        total_tokens=59_999,
        auto_condense_context=True,
        auto_condense_context_percent=60,
        summarize=summarizer,
    )
    assert len(summarizer.requests) == 1


async def test_no_condensing_when_auto_condense_is_off() -> None:
    summarizer = FakeSummarizer()
    result = await prepare(
        conversation(1, 1, 1, 1, 1, 1),
        total_tokens=10**6,
        auto_condense_context=False,
        auto_condense_context_percent=50,
        summarize=summarizer,
    )
    assert summarizer.requests == []
    assert result.removed_count == 2  # floor(5 * 0.5) = 2, already even
    assert result.error is None


# --------------------------------------------------------------------------
# Condensing
# --------------------------------------------------------------------------

OVER = 10**6
"""A totalTokens far over any allowed budget in these tests."""


async def test_condensing_replaces_older_messages_with_a_summary() -> None:
    messages = conversation(100, 100, 100, 100, 100, 100, 100, 100, 100, 100)
    summarizer = FakeSummarizer(SummaryOutcome(summary="  the gist  ", cost=0.25))
    result = await prepare(
        messages,
        total_tokens=950,
        context_window=1000,
        max_tokens=1,
        auto_condense_context=True,
        auto_condense_context_percent=90,
        system_prompt="SYS",
        custom_condensing_prompt="be brief",
        summarize=summarizer,
    )
    summary_message = {"role": "assistant", "content": "the gist", "isSummary": True, "ts": 7}
    assert result.messages == [messages[0], summary_message, *messages[7:]]
    assert result.messages[0] is messages[0]
    assert (result.summary, result.cost, result.error) == ("the gist", 0.25, None)
    assert result.prev_context_tokens == 1050
    # first (100) + summary (8) + three kept (300) + system prompt (3): total was reported.
    assert result.new_context_tokens == 411
    assert (result.truncated, result.removed_count) == (True, 6)

    [request] = summarizer.requests
    assert request.messages == messages[:7]
    assert (request.system_prompt, request.custom_prompt) == ("SYS", "be brief")


async def test_new_context_tokens_exclude_the_system_prompt_when_we_counted_prev() -> None:
    messages = conversation(100, 100, 100, 100, 100, 100)
    result = await prepare(
        messages,
        context_window=600,
        auto_condense_context=True,
        auto_condense_context_percent=50,
        system_prompt="SYSTEM",
        summarize=FakeSummarizer(SummaryOutcome(summary="s")),
    )
    assert result.prev_context_tokens == 600
    assert result.new_context_tokens == 100 + 1 + 300


async def test_condensed_context_still_over_budget_warns() -> None:
    messages = conversation(10, 10, 10, 10, 10, 10)
    result = await prepare(
        messages,
        total_tokens=OVER,
        auto_condense_context=True,
        summarize=FakeSummarizer(SummaryOutcome(summary="s")),
        context_window=100,
        max_tokens=89,  # allowed = 1
    )
    assert result.summary == "s"
    assert any("still exceeds" in w for w in result.warnings)


async def test_condense_error_keeps_error_and_cost_and_falls_back_to_the_window() -> None:
    messages = conversation(1, 1, 1, 1, 1, 1, 1)
    summarizer = FakeSummarizer(SummaryOutcome(cost=0.75, error="HTTP 500 from endpoint"))
    result = await prepare(
        messages, total_tokens=OVER, auto_condense_context=True, summarize=summarizer
    )
    assert result.error == "HTTP 500 from endpoint"
    assert result.cost == 0.75
    assert result.messages == truncate_conversation(messages, 0.5)
    assert (result.truncated, result.removed_count, result.summary) == (True, 2, "")
    assert result.new_context_tokens is None


async def test_condense_error_under_the_budget_leaves_messages_unchanged() -> None:
    messages = conversation(1, 1, 1, 1, 1, 1)
    result = await prepare(
        messages,
        total_tokens=70_000,  # 70% of the window, under allowedTokens (81,808)
        auto_condense_context=True,
        auto_condense_context_percent=60,
        summarize=FakeSummarizer(SummaryOutcome(cost=0.1, error="timed out")),
    )
    assert result.messages == messages
    assert (result.error, result.cost, result.truncated) == ("timed out", 0.1, False)


async def test_empty_summary_is_an_error_and_falls_back() -> None:
    messages = conversation(1, 1, 1, 1, 1, 1)
    result = await prepare(
        messages,
        total_tokens=OVER,
        auto_condense_context=True,
        summarize=FakeSummarizer(SummaryOutcome(summary="   ", cost=0.2)),
    )
    assert result.error is not None and "empty" in result.error
    assert result.cost == 0.2
    assert result.removed_count == 2


async def test_summary_that_does_not_shrink_the_context_is_an_error() -> None:
    messages = conversation(1, 1, 1, 1, 1, 1)  # prev = 6 tokens when counted by us
    result = await prepare(
        messages,
        context_window=10,
        max_tokens=1,
        auto_condense_context=True,
        auto_condense_context_percent=50,
        summarize=FakeSummarizer(SummaryOutcome(summary="a long summary", cost=0.3)),
    )
    assert result.error is not None
    assert "did not make the context smaller" in result.error
    assert result.cost == 0.3
    # prev (6) <= allowed (10 * 0.9 - 1 = 8): no sliding window either.
    assert result.messages == messages


async def test_summarizer_exception_becomes_an_error_and_falls_back() -> None:
    messages = conversation(1, 1, 1, 1, 1, 1)
    result = await prepare(
        messages,
        total_tokens=OVER,
        auto_condense_context=True,
        summarize=FakeSummarizer(raises=True),
    )
    assert result.error is not None and "boom" in result.error
    assert result.truncated


async def test_no_summarizer_is_an_error_and_falls_back() -> None:
    result = await prepare(
        conversation(1, 1, 1, 1, 1, 1), total_tokens=OVER, auto_condense_context=True
    )
    assert result.error is not None and "not configured" in result.error
    assert result.truncated


@pytest.mark.parametrize("n", [1, 2, 3, 4])
async def test_too_few_messages_are_not_condensed(n: int) -> None:
    summarizer = FakeSummarizer()
    result = await prepare(
        conversation(*[1] * n), total_tokens=OVER, auto_condense_context=True, summarize=summarizer
    )
    assert summarizer.requests == []
    assert result.error == NOT_ENOUGH_MESSAGES


async def test_recent_summary_in_the_kept_messages_blocks_condensing() -> None:
    messages = conversation(1, 1, 1, 1, 1, 1)
    messages[4]["isSummary"] = True
    summarizer = FakeSummarizer()
    result = await prepare(
        messages, total_tokens=OVER, auto_condense_context=True, summarize=summarizer
    )
    assert summarizer.requests == []
    assert result.error == CONDENSED_RECENTLY
    assert result.truncated  # the sliding window still applies


async def test_second_condense_summarises_from_the_previous_summary() -> None:
    messages = conversation(1, 1, 1, 1, 1, 1, 1, 1, 1)
    messages[2]["isSummary"] = True
    summarizer = FakeSummarizer()
    await prepare(messages, total_tokens=OVER, auto_condense_context=True, summarize=summarizer)
    [request] = summarizer.requests
    assert request.messages == [messages[0], *messages[2:6]]


async def test_nothing_new_since_the_previous_summary_is_not_condensed() -> None:
    # The older part ends with the summary: a new one would say the same.
    messages = conversation(1, 1, 1, 1, 1, 1)
    messages[2]["isSummary"] = True
    summarizer = FakeSummarizer()
    result = await prepare(
        messages, total_tokens=OVER, auto_condense_context=True, summarize=summarizer
    )
    assert summarizer.requests == []
    assert result.error == CONDENSED_RECENTLY
