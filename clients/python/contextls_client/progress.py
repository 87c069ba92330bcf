"""A one-line progress bar on stderr, for adds of many files."""

from __future__ import annotations

import shutil
from typing import Final, TextIO

from contextls_client.human import bar

PROGRESS_THRESHOLD: Final = 20
"""Fewer files than this finish too fast for a bar to help."""


class ProgressBar:
    """Redraws ``[####----] 12/140 src/app.py`` in place; silent unless enabled."""

    def __init__(self, total: int, stream: TextIO, enabled: bool) -> None:
        self.total = total
        self.stream = stream
        self.enabled = enabled
        self._drawn = False

    @classmethod
    def for_stream(cls, total: int, stream: TextIO) -> ProgressBar:
        """Enabled only on a terminal and only for many files."""
        return cls(total, stream, enabled=stream.isatty() and total > PROGRESS_THRESHOLD)

    def update(self, done: int, label: str) -> None:
        if not self.enabled:
            return
        columns = shutil.get_terminal_size((80, 24)).columns
        text = f"[{bar(done, self.total, width=24)}] {done}/{self.total} "
        room = max(columns - len(text) - 1, 0)
        if len(label) > room:
            label = "…" + label[len(label) - room + 1 :] if room > 1 else ""
        self.stream.write("\r" + (text + label).ljust(columns - 1))
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """Erase the bar so the lines that follow start clean."""
        if self._drawn:
            columns = shutil.get_terminal_size((80, 24)).columns
            self.stream.write("\r" + " " * (columns - 1) + "\r")
            self.stream.flush()
            self._drawn = False
