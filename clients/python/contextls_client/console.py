"""Where output goes: results on stdout (text or ``--json``), everything else on stderr."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO


class Console:
    """Keeps stdout for the command's result so it can be piped.

    In ``--json`` mode stdout carries exactly one JSON document; human lines
    are dropped. Notes (evictions, skips, refusals) always go to stderr.
    """

    def __init__(
        self, json_mode: bool, stdout: TextIO | None = None, stderr: TextIO | None = None
    ) -> None:
        self.json_mode = json_mode
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr

    def out(self, *lines: str) -> None:
        """Human result lines (not printed in ``--json`` mode)."""
        if not self.json_mode:
            for line in lines:
                self.stdout.write(line + "\n")

    def raw(self, text: str) -> None:
        """Write text to stdout exactly, in any mode (``show``)."""
        self.stdout.write(text)

    def json(self, value: Any) -> None:
        """The result document, in ``--json`` mode only. Structs keep their wire names."""
        if self.json_mode:
            import msgspec  # the quick path prints the daemon's own JSON (``raw_json``)

            self.stdout.write(msgspec.json.format(msgspec.json.encode(value), indent=2).decode())
            self.stdout.write("\n")

    def raw_json(self, value: object) -> None:
        """A document decoded from the daemon's JSON, as ``json`` prints its Struct."""
        if self.json_mode:
            import json

            self.stdout.write(json.dumps(value, indent=2, ensure_ascii=False))
            self.stdout.write("\n")

    def note(self, *lines: str) -> None:
        """Side information on stderr; stdout is flushed first so the two interleave in order."""
        self.stdout.flush()
        for line in lines:
            self.stderr.write(line + "\n")
        self.stderr.flush()

    @property
    def ascii_only(self) -> bool:
        """Whether stdout cannot show the block characters of the bar."""
        try:
            "█░…".encode(self.stdout.encoding or "ascii")
        except (UnicodeEncodeError, LookupError):
            return True
        return False

    @property
    def is_terminal(self) -> bool:
        return self.stdout.isatty()

    @property
    def styled(self) -> bool:
        """Whether stdout may carry ANSI styles: a terminal, and ``$NO_COLOR`` unset."""
        import os

        return self.is_terminal and not os.environ.get("NO_COLOR")
