"""The SDK's side of the wire: the host's messages replayed from the opening one, and
its own answers to the requests the host already had (``early``) held back.

``mcp.server.stdio.stdio_server`` takes any line source and any writer; these two
are built on ``handshake.Wire`` (which may already have read the opening line) and the
early reader, which reads every line after it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio.to_thread

from contextls_client.mcp.early import EarlyAnswers
from contextls_client.mcp.handshake import Wire, note


class ReplayedInput:
    """The host's lines: the opening one again, then the rest as they come."""

    def __init__(self, early: EarlyAnswers, opening: bytes) -> None:
        self._early = early
        self._opening = opening

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        line = self._opening
        while line:
            yield line.decode("utf-8", errors="replace")
            line = await anyio.to_thread.run_sync(self._early.lines.get, abandon_on_cancel=True)


SHOWN = 300
"""Characters of each answer a difference note shows."""


class HeldBackOutput:
    """Writes the SDK's messages, but for its answers to the requests answered early.

    Each is compared with the early one: a difference (an SDK that declares more than
    ``handshake.CAPABILITIES``, a tool list that is not ``tools.json``) is logged for
    whoever reads the host's log.
    """

    def __init__(self, wire: Wire, early: EarlyAnswers) -> None:
        self._wire = wire
        self._early = early
        self._buffer: list[str] = []
        self.difference: str | None = None

    async def write(self, text: str) -> None:
        self._buffer.append(text)

    async def flush(self) -> None:
        text, self._buffer = "".join(self._buffer), []
        if self._is_answered_already(text):
            return
        if text:
            await anyio.to_thread.run_sync(self._wire.write, text.encode())

    def _is_answered_already(self, text: str) -> bool:
        try:
            message = json.loads(text)
        except ValueError:
            return False
        if not isinstance(message, dict) or "method" in message or "id" not in message:
            return False
        early: Any = self._early.take(message["id"])
        if early is None:
            return False
        if message.get("result") != early["result"]:
            sent, said = str(early["result"])[:SHOWN], str(message.get("result"))[:SHOWN]
            self.difference = (
                f"the early answer to request {message['id']!r} differs from the SDK's: sent "
                f"{sent}…, the SDK says {said}… (a stale tools.json? run "
                "`python -m contextls_client.mcp.tools_json`)"
            )
            note(self.difference)
        return True
