"""Items named on the command line: ``ctx-3``, just ``3``, or a path or glob of their file."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Final

from contextls.protocol import ErrorCode, ListParams, Requests
from contextls_client.messages import ContextlsError
from contextls_client.session import UsageError, WorkspaceSession

_ITEM_ID: Final = re.compile(r"^(?:ctx-)?([0-9]+)$")


def item_id(text: str) -> str:
    """Normalise ``3`` or ``ctx-3`` to ``ctx-3``."""
    match = _ITEM_ID.match(text.strip())
    if match is None:
        raise UsageError(f"{text!r} is not an item id (ids look like ctx-3)")
    return f"ctx-{int(match[1])}"


def item_ids(texts: list[str]) -> list[str]:
    return [item_id(text) for text in texts]


def is_id(text: str) -> bool:
    return _ITEM_ID.match(text.strip()) is not None


def targets(session: WorkspaceSession, texts: list[str]) -> list[str]:
    """Ids for ids, paths and globs (like Aider's ``/drop src/app.py``).

    A path or glob (relative to the current directory) names every item of the
    window whose file it matches: whole files and their regions. One that
    matches nothing is refused, naming it.
    """
    named = [text for text in texts if not is_id(text)]
    listed = []
    if named:
        listed = (
            session.client.call(Requests.LIST, ListParams(workspace=session.workspace))
        ).items
    ids: list[str] = []
    for text in texts:
        if is_id(text):
            ids.append(item_id(text))
            continue
        pattern = _relative_to_root(text, session.place.root)
        matched = [
            item.id
            for item in listed
            if isinstance(path := item.metadata.get("path"), str)
            and (fnmatch.fnmatchcase(path, pattern) or path.startswith(pattern.rstrip("/") + "/"))
        ]
        if not matched:
            raise ContextlsError(
                ErrorCode.UNKNOWN_ITEM,
                f"no item in the window comes from {text}; nothing changed "
                "(`contextls ls` lists what is there)",
            )
        ids.extend(matched)
    return list(dict.fromkeys(ids))


def _relative_to_root(text: str, root: Path) -> str:
    """A path or glob from the command line, as the workspace-relative posix path items carry."""
    absolute = Path(text) if Path(text).is_absolute() else Path.cwd() / text
    parts: list[str] = []
    for part in absolute.parts:  # resolve '..' and '.' without touching the disk (globs)
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    normal = Path(*parts) if parts else Path(absolute.anchor)
    try:
        return normal.relative_to(root).as_posix()
    except ValueError:
        raise ContextlsError(
            ErrorCode.OUTSIDE_WORKSPACE, f"{text} is outside the workspace {root}"
        ) from None
