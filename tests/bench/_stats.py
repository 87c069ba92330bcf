"""Order statistics, result rows and a plain-text table printer for the benches.

Machines here are shared and noisy, so every figure a bench reports is a
median (of samples, or of per-round medians) and every comparison is a ratio
of two figures measured side by side in the same run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation between ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def median(values: Sequence[float]) -> float:
    return percentile(values, 50.0)


def spread(values: Sequence[float]) -> str:
    """How far the rounds disagree: min..max as a ± percentage of their median.

    Printed next to every median so a reader can tell a real difference from
    noise between rounds.
    """
    if len(values) < 2:
        return "-"
    mid = median(values)
    if mid == 0 or math.isnan(mid):
        return "-"
    lo = (min(values) - mid) / mid * 100
    hi = (max(values) - mid) / mid * 100
    return f"{lo:+.0f}%..{hi:+.0f}%"


def ratio(value: float, floor: float) -> float:
    return value / floor if floor else math.inf


def fmt_us(ns: float) -> str:
    """A duration given in nanoseconds, shown in the most readable unit."""
    if math.isnan(ns):
        return "n/a"
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e3:.1f} µs"


@dataclass
class Row:
    """One line of a bench's verdict: a contextls figure next to its floor.

    ``value`` and ``floor`` are already formatted (units differ per metric);
    ``ratio`` is value/floor (or, for absolute targets, None), and ``passed``
    is None when the metric is informational (no target in the issue).
    """

    metric: str
    value: str
    floor: str
    ratio: float | None
    target: str
    passed: bool | None

    def cells(self) -> list[str]:
        ratio_text = "-" if self.ratio is None else f"{self.ratio:.2f}x"
        verdict = {True: "pass", False: "MISS", None: "-"}[self.passed]
        return [self.metric, self.value, self.floor, ratio_text, self.target, verdict]


ROW_HEADERS = ["metric", "contextls", "floor/baseline", "ratio", "target", "verdict"]


def ratio_row(
    metric: str,
    value: float,
    floor: float,
    limit: float | None,
    unit: str = "ns",
    *,
    at_least: bool = False,
) -> Row:
    """A row whose verdict is ``value/floor <= limit`` (or ``>=`` with at_least)."""
    r = ratio(value, floor)
    fmt = fmt_us if unit == "ns" else (lambda v: f"{v:,.0f} {unit}")
    if limit is None:
        target, passed = "-", None
    elif at_least:
        target, passed = f">= {limit}x", r >= limit
    else:
        target, passed = f"<= {limit}x", r <= limit
    return Row(metric, fmt(value), fmt(floor), r, target, passed)


def print_table(headers: Sequence[str], rows: Iterable[Sequence[str]], title: str = "") -> None:
    body = [list(map(str, r)) for r in rows]
    widths = [len(h) for h in headers]
    for r in body:
        widths = [max(w, len(c)) for w, c in zip(widths, r, strict=True)]
    if title:
        print(f"\n== {title}")
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    print(line)
    print("  ".join("-" * w for w in widths))
    for r in body:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


def print_rows(rows: Sequence[Row], title: str) -> None:
    print_table(ROW_HEADERS, (r.cells() for r in rows), title)
