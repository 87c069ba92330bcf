"""The client library against a scripted fake server: framing, errors, notifications."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from contextls.protocol import AddTextParams, ErrorCode, Requests, Settings, Status, StatusParams
from contextls_client import ContextlsClient, ContextlsError, ServerGoneError
from tests.support.rpc import TIMEOUT

FAKE_SERVER = [sys.executable, str(Path(__file__).with_name("fake_server.py"))]


def fake_client() -> ContextlsClient:
    return ContextlsClient(FAKE_SERVER, request_timeout=TIMEOUT)


async def test_initialize_sends_options_and_returns_capabilities(tmp_path: Path) -> None:
    async with fake_client() as client:
        capabilities = await client.initialize(tmp_path, {"maxTokens": 100})
        options = await client.request("test/options", None, dict[str, Any])
    assert capabilities == {"x": 1}
    assert options == {"maxTokens": 100}


async def test_settings_struct_becomes_camel_case_options(tmp_path: Path) -> None:
    async with fake_client() as client:
        await client.initialize(tmp_path, Settings(max_items=3))
        options = await client.request("test/options", None, dict[str, Any])
    assert options["maxItems"] == 3
    assert options["evictionPolicy"] == "fifo"


async def test_results_decode_into_protocol_structs(tmp_path: Path) -> None:
    async with fake_client() as client:
        await client.initialize(tmp_path)
        status = await client.call(Requests.STATUS, StatusParams())
    assert isinstance(status, Status)
    assert status.max_tokens == 8000
    assert client.latest_status == status


async def test_error_response_raises_with_code_and_message(tmp_path: Path) -> None:
    async with fake_client() as client:
        await client.initialize(tmp_path)
        with pytest.raises(ContextlsError) as caught:
            await client.call(Requests.ADD_TEXT, AddTextParams(content="refuse"))
        # The connection survives a refusal.
        assert (await client.call(Requests.STATUS, StatusParams())).revision == 1
    assert caught.value.error_code is ErrorCode.ITEM_TOO_LARGE
    assert "budget is 5" in str(caught.value)


async def test_notifications_after_the_response_are_collected_by_shutdown(
    tmp_path: Path,
) -> None:
    client = fake_client()
    async with client:
        await client.initialize(tmp_path)
        result = await client.call(Requests.ADD_TEXT, AddTextParams(content="new"))
    assert [item.id for item in result.evicted] == ["ctx-1"]
    evictions = client.evictions()
    assert [item.id for notice in evictions for item in notice.items] == ["ctx-1"]
    assert evictions[0].reason == "maxItems"


async def test_clean_shutdown_exits_zero(tmp_path: Path) -> None:
    client = fake_client()
    await client.start()
    await client.initialize(tmp_path)
    assert await client.shutdown() == 0


async def test_server_requests_are_answered(tmp_path: Path) -> None:
    async with fake_client() as client:
        await client.initialize(tmp_path, {"maxItems": 7})
        answer = await client.request("test/askClient", None, list[dict[str, Any]])
    assert answer == [{"maxItems": 7}]


async def test_crash_fails_the_pending_request_with_stderr(tmp_path: Path) -> None:
    async with fake_client() as client:
        await client.initialize(tmp_path)
        with pytest.raises(ServerGoneError) as caught:
            await client.request("test/crash", None, None)
        with pytest.raises(ServerGoneError):
            await client.call(Requests.STATUS, StatusParams())
    assert "exit code 3" in caught.value.reason
    assert "exploding on purpose" in caught.value.stderr_tail


async def test_broken_framing_is_reported(tmp_path: Path) -> None:
    async with fake_client() as client:
        await client.initialize(tmp_path)
        with pytest.raises(ServerGoneError, match="broke the protocol"):
            await client.request("test/garbage", None, None)


async def test_missing_executable_is_a_server_gone_error() -> None:
    client = ContextlsClient(["/nonexistent/contextls-server"])
    with pytest.raises(ServerGoneError, match="cannot start"):
        await client.start()
