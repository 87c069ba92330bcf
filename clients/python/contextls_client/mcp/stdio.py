"""The SDK's side of the wire: the host's messages replayed from the opening one, and
its own answer to an ``initialize`` the host already had held back.

``mcp.server.stdio.stdio_server`` takes any line source and any writer; these two
are built on ``handshake.Wire`` (which may already have read the opening line).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio.to_thread

from contextls_client.mcp.handshake import Wire, note


class ReplayedInput:
    """The host's lines: the opening one again, then the rest as they come."""

    def __init__(self, wire: Wire, opening: bytes) -> None:
        self._wire = wire
        self._opening = opening

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        line = self._opening
        while line:
            yield line.decode("utf-8", errors="replace")
            line = await anyio.to_thread.run_sync(self._wire.read_line, abandon_on_cancel=True)


class HeldBackOutput:
    """Writes the SDK's messages, but for its answer to the ``initialize`` answered early.

    That answer is compared with the early one: a difference (an SDK that declares
    more than ``handshake.CAPABILITIES``) is logged for whoever reads the host's log.
    """

    def __init__(self, wire: Wire, answered: Any) -> None:
        self._wire = wire
        self._answered = answered
        self._buffer: list[str] = []
        self.difference: str | None = None

    async def write(self, text: str) -> None:
        self._buffer.append(text)

    async def flush(self) -> None:
        text, self._buffer = "".join(self._buffer), []
        if self._answered is not None and self._is_answer_to_the_early_one(text):
            return
        if text:
            await anyio.to_thread.run_sync(self._wire.write, text.encode())

    def _is_answer_to_the_early_one(self, text: str) -> bool:
        try:
            message = json.loads(text)
        except ValueError:
            return False
        if not isinstance(message, dict) or message.get("id") != self._answered["id"]:
            return False
        early, self._answered = self._answered, None
        if message.get("result") != early["result"]:
            self.difference = (
                f"the early initialize answer differs from the SDK's: sent {early['result']}, "
                f"the SDK says {message.get('result')}"
            )
            note(self.difference)
        return True
