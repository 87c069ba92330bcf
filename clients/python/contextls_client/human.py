"""Text for people: numbers, the token bar, tables, item and eviction lines.

Written once for the protocol's Structs (the full CLI, MCP) and for the plain classes the
quick path decodes (``wire_types``): attributes only, no protocol import at run time.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Final

    from contextls import protocol as p
    from contextls_client import wire_types as w

    Item = p.ContextItem | p.ItemSummary | w.ContextItem | w.ItemSummary
    AnyStatus = p.Status | w.Status
    AnySemantic = p.SemanticStatus | w.SemanticStatus

BAR_WIDTH: Final = 30
UNICODE_BAR: Final = ("█", "░")
ASCII_BAR: Final = ("#", "-")
ELLIPSIS: Final = "…"


def count(number: int) -> str:
    """``12345`` → ``12,345``."""
    return f"{number:,}"


def tokens(number: int) -> str:
    return f"{number:,} token" if number == 1 else f"{number:,} tokens"


def plural(number: int, noun: str) -> str:
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


def bar(used: int, total: int, width: int = BAR_WIDTH, ascii_only: bool = False) -> str:
    """A fixed-width gauge of ``used / total``, clamped to full."""
    full, empty = ASCII_BAR if ascii_only else UNICODE_BAR
    fraction = 0.0 if total <= 0 else min(max(used / total, 0.0), 1.0)
    filled = round(fraction * width)
    # Anything in use shows at least one cell, so a nearly empty window is not drawn as empty.
    if used > 0 and total > 0 and filled == 0:
        filled = 1
    return full * filled + empty * (width - filled)


def uri_to_path(uri: str) -> str:
    """``file:///a%20b`` → ``/a b``; anything else is returned unchanged."""
    if not uri.startswith("file://"):
        return uri
    path = uri[len("file://") :]
    path = path[path.find("/") :] if not path.startswith("/") else path  # file://host/…
    if "%" not in path:
        return path
    from urllib.parse import unquote  # ~5 ms: only for a path that needs it

    return unquote(path)


def shown_path(target: str) -> str:
    """A refusal's target as a person named it: a file URI as a path (relative to the
    current directory when below it); a glob or a relative path as it is."""
    if not target.startswith("file:"):
        return target
    path = uri_to_path(target)
    here = os.getcwd()
    return path[len(here) + 1 :] if path.startswith(here + os.sep) else path


def refusal_text(refusal: p.TargetRefusal | w.TargetRefusal) -> str:
    """The refusal's message, naming its file when the message does not."""
    shown = shown_path(refusal.target)
    file = shown.partition("::")[0]  # FILE::NAME: the file is what the message names
    if not shown or file in refusal.message or refusal.target in refusal.message:
        return refusal.message
    return f"{shown}: {refusal.message}"


def flags(item: Item, view: bool = True) -> str:
    """``pinned,stale,outline``; ``view``: say outline or map (item_line says it too)."""
    marks = ["pinned"] if item.pinned else []
    if getattr(item, "stale", False):
        marks.append("stale")
    if view and item.view != "whole":
        marks.append(item.view)
    return ",".join(marks)


def item_line(item: Item) -> str:
    """``ctx-3 code src/a.py:1-20 (312 tokens)``."""
    shown = "" if item.view == "whole" else f", {item.view}"
    return f"{item.id} {item.kind} {item.label} ({tokens(item.tokens)}{shown})"


def eviction_line(item: Item) -> str:
    return (
        f"evicted {item.id} ({item.label}, {tokens(item.tokens)}) to the archive; "
        f"`contextls restore {item.id}` brings it back"
    )


def window_line(status: AnyStatus) -> str:
    """One-line window summary printed after commands that change it."""
    return (
        f"window: {count(status.item_count)}/{count(status.max_items)} items, "
        f"{count(status.tokens)}/{count(budget_of(status))} {status.model or 'tokens'} tokens"
        f" ({status.percent:.1f}%)"
    )


def status_report(status: AnyStatus, database: str = "", ascii_only: bool = False) -> list[str]:
    """The lines of ``contextls status``."""
    budget = budget_of(status)
    gauge = bar(status.tokens, budget, ascii_only=ascii_only)
    lines = [
        f"workspace  {uri_to_path(status.workspace)}",
        f"tokens     [{gauge}] {count(status.tokens)} / {count(budget)}  ({status.percent:.1f}%)"
        f" {status.model or status.encoding}",
        f"items      {count(status.item_count)} / {count(status.max_items)}"
        f"  ({status.pinned_count} pinned, {status.stale_count} stale"
        + (f", {status.outlined_count} outlined" if status.outlined_count else "")
        + (f", {plural(status.map_count, 'map')}" if status.map_count else "")
        + ")",
        f"archive    {plural(status.archived_count, 'item')}"
        f" ({count(status.evicted_total)} evicted in total)",
    ]
    if status.next_eviction is not None:
        lines.append(f"next out   {item_line(status.next_eviction)}")
    elif status.item_count:
        lines.append("next out   nothing: every item is pinned")
    else:
        lines.append("next out   nothing: the window is empty")
    last_out: Sequence[Item] = status.last_evicted
    lines.extend(
        f"{'last out' if index == 0 else '':<10} {item_line(item)}"
        for index, item in enumerate(last_out)
    )
    lines.append(
        f"window     {status.model or status.encoding} ({status.encoding}, "
        f"{status.count_label}), {status.eviction_policy} eviction"
    )
    if status.budget_policy == "adaptive":
        lines.append(f"budget     {adaptive_reason(status)}")
    if status.cache is not None:
        lines.append(
            f"cache      prefix kept: {status.cache.kept:.0%} of the last render; "
            f"the next sends ~{count(status.cache.next_uncached)} tokens past it"
        )
    if status.semantic is not None:
        lines.append(f"search     {semantic_line(status.semantic)}")
    if database:
        lines.append(f"database   {database}")
    lines.extend(
        f"{'warning' if n == 0 else '':<10} {said}" for n, said in enumerate(status.warnings)
    )
    return lines


def budget_of(status: AnyStatus) -> int:
    """The budget in effect: the adaptive one, or ``maxTokens``."""
    return status.budget or status.max_tokens


def adaptive_reason(status: AnyStatus) -> str:
    """Why the budget is what it is: ``adaptive: debugging, complexity 0.72 → 14.0k of
    base 8k``."""
    return (
        f"adaptive: {status.task.replace('_', ' ')}, complexity {status.complexity:.2f} → "
        f"{budget_of(status) / 1000:.1f}k of base {short(status.max_tokens)}"
    )


def short(number: int) -> str:
    """``14000`` → ``14.0k``, ``8000`` → ``8k``, ``950`` → ``950``."""
    if number < 1000:
        return str(number)
    thousands = number / 1000
    return f"{thousands:.0f}k" if thousands == int(thousands) else f"{thousands:.1f}k"


def semantic_line(semantic: AnySemantic) -> str:
    """How the archive is searched, and the embedding backlog."""
    if not semantic.available:
        return f"by words only: search by meaning is unavailable ({semantic.reason})"
    waiting = semantic.pending + semantic.window_pending
    left = f", {count(waiting)} waiting to be embedded" if waiting else ""
    return f"by words and meaning: {plural(semantic.indexed, 'archived item')} embedded{left}"


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    right_aligned: Sequence[int] = (),
    shrink_column: int | None = None,
    max_width: int | None = None,
) -> list[str]:
    """Plain aligned columns; ``shrink_column`` is cut with … to fit ``max_width``."""
    widths = [len(header) for header in headers]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(cell))
    if shrink_column is not None and max_width is not None:
        overflow = sum(widths) + 2 * (len(widths) - 1) - max_width
        if overflow > 0:
            widths[shrink_column] = max(
                len(headers[shrink_column]), widths[shrink_column] - overflow
            )

    def fit(cell: str, index: int) -> str:
        width = widths[index]
        if len(cell) > width:
            cell = cell[: max(width - 1, 0)] + ELLIPSIS
        return cell.rjust(width) if index in right_aligned else cell.ljust(width)

    return [
        "  ".join(fit(cell, index) for index, cell in enumerate(row)).rstrip()
        for row in [list(headers), *rows]
    ]


EVICTION_LINES_SHOWN: Final = 10


def eviction_lines(items: Sequence[Item]) -> list[str]:
    """One line per evicted item; a long run ends in a summary line instead."""
    if len(items) <= EVICTION_LINES_SHOWN + 2:
        return [eviction_line(item) for item in items]
    shown, rest = items[:EVICTION_LINES_SHOWN], items[EVICTION_LINES_SHOWN:]
    rest_tokens = sum(item.tokens for item in rest)
    return [
        *(eviction_line(item) for item in shown),
        f"evicted {len(rest)} more ({rest[0].id} … {rest[-1].id}, {tokens(rest_tokens)}) "
        "to the archive; `contextls search QUERY` finds them, `contextls restore ID` "
        "brings one back",
    ]


EMPTY_WINDOW: Final = "the window is empty; `contextls add PATH` puts a file in it"
LABEL_COLUMN: Final = 2


def listing_lines(items: Sequence[Item], status: AnyStatus, width: int | None) -> list[str]:
    """``contextls ls``: one row per item, then the window line."""
    if not items:
        return [EMPTY_WINDOW]
    rows = [[item.id, item.kind, item.label, count(item.tokens), flags(item)] for item in items]
    return [
        *table(
            ["ID", "KIND", "LABEL", "TOKENS", "FLAGS"],
            rows,
            right_aligned=[3],
            shrink_column=LABEL_COLUMN,
            max_width=width,
        ),
        "",
        window_line(status),
    ]


def render_notes(rendered: p.RenderResult | w.RenderResult, max_tokens: int | None) -> list[str]:
    """What ``contextls show`` says on stderr beside the context: once why each item it
    left out is out (the server's warnings explain the items they name), what came from
    the archive, and the warnings."""
    notes = []
    if not rendered.item_ids and not rendered.history_ids:
        notes.append(EMPTY_WINDOW)
    explained = {
        word
        for warning in rendered.warnings
        for word in warning.replace(",", " ").replace("(", " ").replace(")", " ").split()
        if word.startswith("ctx-")
    }
    unexplained = [item_id for item_id in rendered.omitted_ids if item_id not in explained]
    if unexplained:
        notes.append(
            f"left out {plural(len(unexplained), 'item')} to stay within "
            f"{count(rendered.budget or max_tokens or 0)} tokens: " + ", ".join(unexplained)
        )
    if rendered.history_ids:
        scores = zip(rendered.history_ids, rendered.history_scores, strict=False)
        found = ", ".join(f"{item_id} ({score:.2f})" for item_id, score in scores)
        notes.append(f"from the archive: {found}")
    left: Sequence[p.Omission | w.Omission] = rendered.history_omitted
    if left:
        notes.append(
            f"left out of the relevant history, to stay within {count(rendered.budget)} tokens: "
            + "; ".join(f"{omission.id} ({omission.reason})" for omission in left)
        )
    notes.extend(f"contextls: {warning}" for warning in rendered.warnings)
    return notes
