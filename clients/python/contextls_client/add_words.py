"""What ``contextls add`` says of a bulk add's answer, written once for the full path
(protocol Structs) and the quick path (``wire_types``): attributes only, no protocol
import at run time."""

from __future__ import annotations

from contextls_client.human import count, item_line, plural, refusal_text, tokens

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Final

    from contextls import protocol as p
    from contextls_client import wire_types as w

    Added = p.AddFilesResult | w.AddFilesResult
    Item = p.ContextItem | w.ContextItem
    Growth = p.PinnedGrowth | w.PinnedGrowth
    Refusal = p.TargetRefusal | w.TargetRefusal

ITEMISED: Final = 20
"""Up to this many added items are listed one per line; more are summed up."""
SKIPS_NAMED: Final = 5
"""Up to this many skipped files are named; more are only counted."""
REFUSALS_NAMED: Final = 3


def added_lines(result: Added) -> list[str]:
    """The stdout lines of what was added: one per item, or a sum and the pinned growth."""
    items: Sequence[Item] = result.items
    if len(items) <= ITEMISED:
        return [_added_line(item, result) for item in items]
    return [
        f"added {plural(len(items), 'item')} ({tokens(result.tokens)})",
        *pinned_growth_lines(result),
    ]


def _added_line(item: Item, result: Added) -> str:
    line = f"added {item_line(item)}" + (", pinned" if item.pinned else "")
    absorbed = [old for old, into in result.merged.items() if into == item.id]
    if absorbed:
        line += f"; merged {', '.join(absorbed)} into it"
        growth: Sequence[Growth] = result.pinned_growth
        grown = next((g for g in growth if g.id == item.id), None)
        if grown is not None:
            line += f" ({grown_words(grown)})"
    return line


def pinned_growth_lines(result: Added) -> list[str]:
    growth: Sequence[Growth] = result.pinned_growth
    return [f"{grown.id} ({grown.label}): {grown_words(grown)}" for grown in growth]


def grown_words(grown: Growth) -> str:
    """Never silent: a pinned region that grew (into a whole file, say) takes more budget."""
    return (
        f"pinned, as what it absorbed was: {tokens(grown.tokens_before)} pinned before, "
        f"{count(grown.tokens_after)} now; `contextls unpin {grown.id}` lets it go"
    )


def left_out_lines(result: Added) -> list[str]:
    """The stderr lines of what was refused and what the expansion left out."""
    refused: Sequence[Refusal] = result.refused
    lines = [f"contextls: {refusal_text(refusal)}" for refusal in refused]
    if result.skipped:
        reasons: dict[str, int] = {}
        for skip in result.skipped:
            reasons[skip.reason] = reasons.get(skip.reason, 0) + 1
        detail = ", ".join(f"{number} {reason}" for reason, number in reasons.items())
        lines.append(f"skipped {plural(len(result.skipped), 'file')} while expanding: {detail}")
        secret = [skip for skip in result.skipped if skip.reason.startswith("may hold secrets")]
        named = result.skipped if len(result.skipped) <= SKIPS_NAMED else secret
        lines.extend(f"  {skip.path} ({skip.reason})" for skip in named)
    return lines


def refused_message(refused: Sequence[Refusal]) -> str:
    """The message of the error document of an add of which nothing got through."""
    texts = [refusal_text(refusal) for refusal in refused]
    if not texts:
        return "nothing was added"
    if len(texts) == 1:
        return texts[0]
    return f"nothing was added: {len(texts)} were refused ({'; '.join(texts)})"


def needs_force_words(plan: Added) -> str:
    """A bulk add that would evict more than half of the window, in words."""
    evicted: Sequence[Item] = plan.evicted
    held = plan.status.item_count
    return (
        f"contextls: adding {plural(len(plan.items), 'file')} ({tokens(plan.tokens)}) would "
        f"evict {len(evicted)} of the window's {plural(held, 'item')} "
        f"({tokens(sum(item.tokens for item in evicted))}), more than half of it; "
        "nothing was added. `--dry-run` lists them, `--force` adds anyway"
    )
