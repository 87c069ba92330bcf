"""``contextls add PATH…`` on the quick path: files, folders and globs (``--pin``,
``--force``), printed as the full path prints them (``add_words``, ``human``).

A change is not sent before the daemon says it serves this database and runs this code:
the session opens in one round trip (``quick.opening``), the add is the second.
"""

from __future__ import annotations

import os

from contextls_client import wire_types as w
from contextls_client.add_words import (
    added_lines,
    left_out_lines,
    needs_force_words,
    refused_message,
)
from contextls_client.console import Console
from contextls_client.human import eviction_lines, window_line
from contextls_client.quick_talk import Command, Conversation, opening, this_daemon, uri, went_away

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

GLOB_CHARACTERS: Final = frozenset("*?[")
INVALID_PARAMS: Final = -32602
NEEDS_FORCE: Final = -31013
ADD_ID: Final = 3


def add(talk: Conversation, command: Command, root: str, database: str) -> int | None:
    """Add ``command.targets``; None when the full path is to (another daemon, gone)."""
    try:
        talk.send(opening(root, database))
        if not this_daemon(talk.answers({1, 2}), database):
            return None
        params: dict[str, Any] = {
            "workspace": uri(root),
            "targets": [_target(text) for text in command.targets],
        }
        if command.pin:
            params["pin"] = True
        if command.force:
            params["force"] = True
        talk.send([(ADD_ID, "contextls/addFiles", params)])
        answer = talk.answers({ADD_ID})[ADD_ID]
    except (OSError, ValueError) as error:
        went_away(error)
        return None
    talk.drain()
    return _said(Console(json_mode=command.json), talk, answer)


def _target(text: str) -> dict[str, str]:
    """An argument as the server takes it: a file or folder URI, or an absolute glob (a
    pattern that names an existing file is that file)."""
    literal = _joined(os.getcwd(), text)
    if GLOB_CHARACTERS & set(text) and not os.path.exists(literal):
        return {"glob": literal}
    return {"uri": uri(literal)}


def _joined(cwd: str, text: str) -> str:
    """``Path(cwd) / text`` as a string: ``.`` parts, empty parts and a trailing ``/`` go."""
    joined = text if text.startswith("/") else f"{cwd}/{text}"
    parts = [part for part in joined.split("/") if part not in ("", ".")]
    return "/" + "/".join(parts)


class _Heard:
    """What a command says once: evictions by id, warnings by their words."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.reported: set[str] = set()
        self.warned: set[str] = set()

    def evicted(self, items: list[w.ContextItem]) -> None:
        fresh = [item for item in items if item.id not in self.reported]
        self.reported.update(item.id for item in fresh)
        self.console.note(*eviction_lines(fresh))

    def warn(self, warnings: list[str]) -> None:
        for warning in warnings:
            if warning not in self.warned:
                self.warned.add(warning)
                self.console.note(f"contextls: warning: {warning}")

    def session_ends(self, talk: Conversation, messages: bool = True) -> None:
        """As the full path's session ends: evictions only a notification told of, then
        what the daemon showed the person."""
        self.evicted([w.ContextItem(item) for item in talk.evicted])
        if messages:
            self.warn([text.removeprefix("contextls: ") for text in talk.shown])


def _said(console: Console, talk: Conversation, answer: dict[str, Any]) -> int:
    heard = _Heard(console)
    error = answer.get("error")
    if error is not None:
        code, message, data = error.get("code"), error.get("message", ""), error.get("data")
        console.raw_json({"error": {"code": code, "message": message, "data": data}})
        if code == NEEDS_FORCE and isinstance(data, dict):
            console.note(needs_force_words(w.AddFilesResult(data)))
        else:
            console.note(f"contextls: {message}")
        heard.session_ends(talk)
        return 1
    raw = answer["result"]
    result = w.AddFilesResult(raw)
    console.out(*added_lines(result))
    heard.warn(result.warnings)
    heard.evicted(result.evicted)
    console.note(*left_out_lines(result))
    heard.session_ends(talk)
    if not result.items:
        refused = result.refused
        code = refused[0].code if refused else INVALID_PARAMS
        data = {"refused": raw.get("refused", []), "skipped": raw.get("skipped", [])}
        said = {"code": code, "message": refused_message(refused), "data": data}
        console.raw_json({"error": said})
        if not refused:
            console.note("contextls: nothing was added")
        return 1
    console.raw_json(raw)
    console.out(window_line(result.status))
    return 1 if result.refused else 0
