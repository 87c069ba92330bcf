"""What the agent reads back: each result and each refusal as a few lines of text.

Agents pay for every token of a result, so results say what changed and how full
the window is, and never echo more of the agent's own input than a glance needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec

from contextls.protocol import (
    AddFilesResult,
    AddResult,
    ConfigureResult,
    ContextItem,
    ErrorCode,
    ItemSummary,
    NoRoomData,
)
from contextls_client.human import count, flags, item_line, plural, tokens, window_line
from contextls_client.messages import ContextlsError

ECHO_LIMIT: Final = 200
"""Characters of the agent's own input (a path, a glob) quoted back in a message."""
MESSAGE_LIMIT: Final = 600
"""Characters of a refusal; the server's messages quote paths, which may be huge."""
ITEMS_NAMED: Final = 20
"""Items named one by one in a bulk result; the rest are counted."""


class Refusal(Exception):
    """A tool call that changed nothing; the message, for the agent, says why."""


def cut(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` if short, else its start and how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({count(len(text))} characters)"


def item_entry(item: ContextItem | ItemSummary) -> str:
    """``ctx-3 code src/a.py:1-20 (312 tokens) pinned,stale``."""
    marks = flags(item, view=False)  # item_line says outline or map
    return f"{item_line(item)} {marks}" if marks else item_line(item)


def named(items: Sequence[ContextItem | ItemSummary], verb: str) -> list[str]:
    """One line per item, the first ``ITEMS_NAMED``; a count of the rest."""
    lines = [f"{verb} {item_entry(item)}" for item in items[:ITEMS_NAMED]]
    if len(items) > ITEMS_NAMED:
        rest = items[ITEMS_NAMED:]
        lines.append(f"{verb} {len(rest)} more ({tokens(sum(item.tokens for item in rest))})")
    return lines


def evicted_lines(items: Sequence[ContextItem | ItemSummary]) -> list[str]:
    lines = named(items, "evicted to the archive:")
    if items:
        lines.append("(restore brings an evicted item back)")
    return lines


def added(result: AddResult) -> str:
    lines = [f"added {item_entry(result.item)}"]
    absorbed = [item_id for item_id in result.merged if item_id != result.item.id]
    if absorbed:  # a new item made of those regions: not "already there"
        lines[0] = f"merged {', '.join(absorbed)} into {item_entry(result.item)}"
    elif result.deduplicated:
        lines[0] = f"already in the window: {item_entry(result.item)}"
    lines.extend(evicted_lines(result.evicted))
    lines.extend(f"warning: {warning}" for warning in result.warnings)
    lines.append(window_line(result.status))
    return "\n".join(lines)


def added_files(result: AddFilesResult) -> str:
    lines = [f"added {plural(len(result.items), 'file')} ({tokens(result.tokens)}):"]
    lines.extend(named(result.items, " "))
    if result.merged:
        lines.append(f"they absorbed {', '.join(result.merged)}")
    for growth in result.pinned_growth:
        lines.append(
            f"pinned {growth.id} ({growth.label}) grew from {tokens(growth.tokens_before)} "
            f"to {tokens(growth.tokens_after)}, absorbing {', '.join(growth.absorbed)}"
        )
    lines.extend(evicted_lines(result.evicted))
    if result.skipped:
        shown = ", ".join(f"{cut(s.path)} ({s.reason})" for s in result.skipped[:ITEMS_NAMED])
        more = len(result.skipped) - ITEMS_NAMED
        lines.append(
            f"skipped {plural(len(result.skipped), 'file')}: {shown}"
            + (f", and {more} more" if more > 0 else "")
        )
    lines.extend(
        f"refused {cut(r.target)}: {cut(r.message, MESSAGE_LIMIT)}" for r in result.refused
    )
    lines.extend(f"warning: {warning}" for warning in result.warnings)
    lines.append(window_line(result.status))
    return "\n".join(lines)


def refusal(error: ContextlsError) -> str:
    """The server's refusal in words; the bulk add's two refusals with their figures."""
    if error.error_code is ErrorCode.NEEDS_FORCE and isinstance(error.data, dict):
        if "settings" in error.data:  # a change of settings (ConfigureResult), not an add
            change = msgspec.convert(error.data, ConfigureResult)
            return "\n".join(
                [
                    f"nothing was changed: setting {' and '.join(change.changed)} would evict "
                    f"{plural(len(change.evicted), 'item')}, more than half of the window:",
                    *named(change.evicted, " "),
                    "Ask the person whether these may go; if so, call it again with force=true.",
                ]
            )
        planned = msgspec.convert(error.data, AddFilesResult)
        gone = planned.evicted
        return "\n".join(
            [
                f"nothing was added: these {plural(len(planned.items), 'file')} "
                f"({tokens(planned.tokens)}) would evict {plural(len(gone), 'item')}, more "
                "than half of the window:",
                *named(gone, " "),
                "Ask the person whether these may go; if so, call add_file again with "
                "force=true. A narrower folder or glob may fit without evicting as much.",
            ]
        )
    if error.error_code is ErrorCode.NO_ROOM and error.data is not None:
        room = msgspec.convert(error.data, NoRoomData)
        short = []
        if room.short_tokens:
            short.append(tokens(room.short_tokens))
        if room.short_items:
            short.append(plural(room.short_items, "item"))
        return (
            f"nothing was added: these {plural(room.items, 'file')} take {tokens(room.tokens)}, "
            f"and the window leaves {tokens(room.available_tokens)} and "
            f"{plural(room.available_items, 'item')} beside its pinned items (short by "
            f"{' and '.join(short) or 'nothing'}). Add a narrower folder or glob, or unpin "
            "something."
        )
    return cut(error.message, MESSAGE_LIMIT)
