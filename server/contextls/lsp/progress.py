"""LSP's work-done progress for a long request: ``$/progress`` under the client's token.

A map of a large repository or a folder add reads and parses for seconds; a client that
sent a ``workDoneToken`` with it hears how far it got (begin, then reports, then end),
from the event loop whichever thread the work runs on.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Final

from contextls.lsp.outbox import Outbox

PROGRESS: Final = "$/progress"
EVERY: Final = 0.25
"""Seconds between two reports (the last one always goes)."""


class Reporter:
    def __init__(self, outbox: Outbox, token: str | int | None, title: str) -> None:
        self._outbox = outbox
        self._token = token
        self._title = title
        self._began = False
        self._last = 0.0
        self._loop = asyncio.get_running_loop()

    def _send(self, value: dict[str, Any]) -> None:
        if self._token is not None:
            self._outbox.notify(PROGRESS, {"token": self._token, "value": value})

    def report(self, done: int, total: int) -> None:
        """``done`` of ``total`` files read; callable from a worker thread."""
        if self._token is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not self._loop:
            self._loop.call_soon_threadsafe(self.report, done, total)
            return
        if not self._began:
            self._began = True
            self._send(
                {"kind": "begin", "title": self._title, "cancellable": True, "percentage": 0}
            )
        now = time.monotonic()
        if done < total and now - self._last < EVERY:
            return
        self._last = now
        percentage = round(100 * done / total) if total else 100
        self._send(
            {"kind": "report", "message": f"{done:,} of {total:,} files", "percentage": percentage}
        )

    def end(self, message: str) -> None:
        if self._began:
            self._send({"kind": "end", "message": message})
