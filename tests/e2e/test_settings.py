"""Settings from initializationOptions and didChangeConfiguration, with fallbacks."""

from __future__ import annotations

from lsprotocol import types as lsp

from .conftest import Session, Starter


def configure(session: Session, settings: object) -> None:
    session.notify(
        lsp.WORKSPACE_DID_CHANGE_CONFIGURATION, lsp.DidChangeConfigurationParams(settings=settings)
    )


async def test_initialization_options_apply(start: Starter) -> None:
    session = await start({"maxItems": 7, "maxTokens": 1234, "encoding": "cl100k_base"})
    status = await session.call("contextls/status")
    assert (status["maxItems"], status["maxTokens"], status["encoding"]) == (7, 1234, "cl100k_base")


async def test_lowering_a_limit_evicts_at_once_and_notifies(session: Session) -> None:
    for n in range(5):
        await session.call("contextls/addText", content=f"note {n}")
    configure(session, {"contextls": {"maxItems": 2}})
    await session.wait_for(lambda: bool(session.evictions))
    assert [item["id"] for item in session.evictions[0]["items"]] == ["ctx-1", "ctx-2", "ctx-3"]
    await session.wait_for(lambda: session.statuses[-1]["itemCount"] == 2)
    configure(session, {"maxTokens": 20})  # the flat form works too
    await session.wait_for(lambda: session.statuses[-1]["maxTokens"] == 20)
    status = await session.call("contextls/status")
    assert status["tokens"] <= 20 and status["itemCount"] == 1 and status["maxItems"] == 2


async def test_invalid_settings_fall_back_with_a_message(start: Starter) -> None:
    session = await start({"maxItems": 0, "maxTokens": "lots", "evictionPolicy": "random"})
    status = await session.call("contextls/status")
    assert (status["maxItems"], status["maxTokens"], status["evictionPolicy"]) == (50, 8000, "fifo")
    await session.wait_for(lambda: len(session.messages) >= 3)
    text = "\n".join(session.messages)
    assert "maxItems" in text and "maxTokens" in text and "evictionPolicy" in text
    configure(session, {"contextls": {"maxItems": 5000}})
    await session.wait_for(lambda: any("5000" in message for message in session.messages))
    assert (await session.call("contextls/status"))["maxItems"] == 50


async def test_limit_below_pinned_usage_is_kept_with_a_message(session: Session) -> None:
    await session.call("contextls/addText", content="pinned one", pin=True)
    await session.call("contextls/addText", content="pinned two", pin=True)
    configure(session, {"maxItems": 1})
    await session.wait_for(lambda: any("pinned" in message for message in session.messages))
    status = await session.call("contextls/status")
    assert status["maxItems"] == 50 and status["itemCount"] == 2


async def test_relevance_policy_evicts_low_value_first(start: Starter) -> None:
    session = await start({"maxItems": 2, "evictionPolicy": "relevance"})
    await session.call("contextls/addText", content="Traceback: KeyError", kind="error")
    await session.call("contextls/addText", content="misc", kind="custom")
    result = await session.call("contextls/addText", content="a note", kind="text")
    assert [item["kind"] for item in result["evicted"]] == ["custom"]


async def test_switching_encoding_recounts(session: Session) -> None:
    await session.call("contextls/addText", content="Unicode text: naïve café résumé 東京")
    o200k = (await session.call("contextls/status"))["tokens"]
    configure(session, {"encoding": "cl100k_base"})
    await session.wait_for(
        lambda: bool(session.statuses) and session.statuses[-1]["encoding"] == "cl100k_base"
    )
    cl100k = (await session.call("contextls/status"))["tokens"]
    rendered = (await session.call("contextls/render"))["text"]
    expected = (
        await session.call("contextls/countTokens", text=rendered, encoding="cl100k_base")
    )["tokens"]
    assert cl100k == expected and cl100k != o200k


async def test_every_model_offered_is_one_a_window_takes(session: Session) -> None:
    info = await session.call("contextls/serverInfo")
    offered = {choice["name"]: choice for choice in info["models"]}
    assert {"gpt-4o", "claude-opus-4.7", "gemini-2.5"} <= offered.keys()
    assert offered["gemini-2.5"]["exact"] is False and "estimate" in offered["gemini-2.5"]["label"]
    for name, choice in offered.items():
        if choice["unavailable"]:
            continue
        result = await session.call("contextls/configure", settings={"model": name})
        status = result["status"]
        assert (status["model"], status["encoding"]) == (name, choice["encoding"])
        assert (status["countExact"], status["countLabel"]) == (choice["exact"], choice["label"])


async def test_a_change_that_evicts_most_of_the_window_is_refused_unless_forced(
    session: Session,
) -> None:
    for n in range(4):
        await session.call("contextls/addText", content=f"note {n}")
    before = await session.call("contextls/status")

    error = await session.error("contextls/configure", settings={"maxItems": 1})
    assert error.code == -31013  # NEEDS_FORCE, and its data is the plan
    planned = error.data
    assert planned["dryRun"] and planned["changed"] == ["maxItems"]
    assert [item["id"] for item in planned["evicted"]] == ["ctx-1", "ctx-2", "ctx-3"]
    after = await session.call("contextls/status")
    assert (after["revision"], after["itemCount"], after["maxItems"]) == (
        before["revision"],
        4,
        before["maxItems"],
    )

    forced = await session.call("contextls/configure", settings={"maxItems": 1}, force=True)
    assert [item["id"] for item in forced["evicted"]] == ["ctx-1", "ctx-2", "ctx-3"]
    assert forced["status"]["itemCount"] == 1 and forced["settings"]["maxItems"] == 1
