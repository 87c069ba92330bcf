"""What a bulk add would push out of the window, before anything is sent.

``contextls add DIR`` larger than the budget used to flush every unpinned
item to the archive without a word. Now the CLI first plays the adds against
the window as it is (``contextls/list``, ``contextls/status``, and
``contextls/countTokens`` for each file), oldest unpinned out first, as the
``fifo`` policy does; with ``relevance`` it is an estimate, and says so.
An add that would evict more than half of the window (its items or its
tokens) needs ``--force``; ``--dry-run`` shows the estimate and sends nothing.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from contextls.protocol import (
    ContextItem,
    CountTokensParams,
    ListParams,
    Requests,
    StatusParams,
)
from contextls_client.expand import PlannedAdd
from contextls_client.session import Session


@dataclass
class Estimate:
    added_tokens: int = 0
    evicted: list[ContextItem] = field(default_factory=list)
    window_items: int = 0
    window_tokens: int = 0
    exact: bool = True
    """False under the ``relevance`` policy: the order of eviction is only approximated."""

    @property
    def evicted_tokens(self) -> int:
        return sum(item.tokens for item in self.evicted)

    @property
    def flushes_half(self) -> bool:
        """Would evict more than half of what the window holds (items or tokens)."""
        return bool(self.evicted) and (
            len(self.evicted) * 2 > self.window_items
            or self.evicted_tokens * 2 > self.window_tokens
        )


async def estimate(session: Session, adds: list[PlannedAdd]) -> Estimate:
    client, workspace = session.client, session.workspace
    status = await client.call(Requests.STATUS, StatusParams(workspace=workspace))
    window = (await client.call(Requests.LIST, ListParams(workspace=workspace))).items
    result = Estimate(
        window_items=len(window),
        window_tokens=sum(item.tokens for item in window),
        exact=status.eviction_policy == "fifo",
    )
    held: OrderedDict[str, ContextItem] = OrderedDict((item.id, item) for item in window)
    by_path = {item.metadata.get("path"): item.id for item in window if item.kind == "file"}
    total = result.window_tokens
    for n, planned in enumerate(adds):
        try:
            text = planned.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # the server refuses it; it takes no room
        if planned.lines is not None:
            text = "".join(
                text.splitlines(keepends=True)[planned.lines.start - 1 : planned.lines.end]
            )
        count = await client.call(
            Requests.COUNT_TOKENS, CountTokensParams(workspace=workspace, text=text)
        )
        result.added_tokens += count.tokens
        path = _relative(planned.path, session.place.root)
        replaced = by_path.pop(path, None) if planned.lines is None else None
        if replaced is not None and replaced in held:
            total -= held.pop(replaced).tokens
        key = f"new-{n}"
        held[key] = ContextItem(
            id=key, kind="file", content="", label=path, timestamp=0, tokens=count.tokens
        )
        total += count.tokens
        while len(held) > status.max_items or total > status.max_tokens:
            victim = next(
                (item for item_id, item in held.items() if not item.pinned and item_id != key),
                None,
            )
            if victim is None:
                break  # the server will refuse this one: no room beside the pinned items
            del held[victim.id]
            total -= victim.tokens
            if not victim.id.startswith("new-"):
                result.evicted.append(victim)
    return result


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
