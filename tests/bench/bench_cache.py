"""Bench 17: how much of each render a provider's prompt cache can keep.

Providers reuse only a byte-identical prefix of a prompt (Anthropic behind explicit
breakpoints, OpenAI automatically in 128-token steps past 1,024), so what the window
renders first should change least. Seeded replays of a working session on code nobody
here wrote (the interpreter's ``json``, ``email`` and ``http`` packages, copied into a
fresh folder), through the real workspace in process: adds of files, regions and notes
that overflow the default budget many times, edits to files in the window, pins and
unpins, steps that change nothing. After each step the window is rendered (markdown)
and compared with the render before it: the share of the earlier render that is a
byte-identical prefix of the new one (what a cache keeps), and the tokens a request
sending it would pay for under Anthropic's cache pricing (a read 0.1x, a write 1.25x,
the rest 1x) and OpenAI's (a cached prefix, in 128-token steps past 1,024, at 0.5x).

Targets: the reusable share >= 0.90 over the replays; at most 1 step in 20 keeping less
than half; a step that changes nothing changes no byte.
"""

from __future__ import annotations

import random
import shutil
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from _harness import Config, bench_main
from _stats import Row, print_table

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.unit.test_service import Editor, start

MIXES = {
    "notes and files": {"file": 3, "region": 2, "note": 4, "edit": 1, "pin": 1, "nothing": 2},
    "editing": {"file": 2, "region": 2, "note": 1, "edit": 5, "pin": 1, "nothing": 2},
    "reading code": {"file": 5, "region": 4, "note": 1, "edit": 1, "pin": 2, "nothing": 1},
}
PACKAGES = ("json", "email", "http")


def corpus(target: Path) -> list[str]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    rels: list[str] = []
    for package in PACKAGES:
        for path in sorted((stdlib / package).glob("*.py")):
            rel = f"{package}/{path.name}"
            (target / package).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / rel)
            rels.append(rel)
    return rels


@dataclass
class Replay:
    shares: list[float] = field(default_factory=list)
    unchanged_steps: int = 0
    unchanged_broken: int = 0
    anthropic: list[float] = field(default_factory=list)
    anthropic_uncached: list[float] = field(default_factory=list)
    openai: list[float] = field(default_factory=list)
    fill: list[float] = field(default_factory=list)
    """How full the window is after each step (what a lower low-water mark gives up)."""


def common_prefix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    low, high = 0, limit
    while low < high:  # bisect on equal prefixes (str slices compare in C)
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def replay(root: Path, rels: list[str], mix: dict[str, int], seed: int, steps: int) -> Replay:
    rng = random.Random(seed)
    session = start(root, ":memory:", Editor())
    workspace = session.route()
    count = workspace.tokenizer.count
    actions = [name for name, weight in mix.items() for _ in range(weight)]
    result = Replay()
    before = ""
    for step in range(steps):
        action = rng.choice(actions)
        rel = rng.choice(rels)
        uri = (root / rel).as_uri()
        try:
            if action == "file":
                workspace.adding.add_file(uri)
            elif action == "region":
                lines = (root / rel).read_text().count("\n")
                first = rng.randrange(max(lines - 20, 1))
                workspace.adding.add_region(uri, (first, 0), (first + rng.randrange(5, 30), 0))
            elif action == "note":
                workspace.adding.add_text("text", f"note {step}: " + "why does it fail " * 20)
            elif action == "edit":
                in_window = [i.path for i in workspace.window if i.path]
                if in_window:
                    path = root / rng.choice(in_window)
                    path.write_text(path.read_text() + f"\n# edited at step {step}\n")
                    workspace.follower.follow_files()
            elif action == "pin":
                ids = [item.id for item in workspace.window]
                if ids:
                    chosen = workspace.window.get(rng.choice(ids))
                    workspace.changes.pin(chosen.id, not chosen.pinned)
        except Exception:  # a refusal is a step too: it changes nothing
            pass
        workspace.unit_of_work.commit()
        text = workspace.reader.render("markdown", None, None, None, None).text
        result.fill.append(workspace.window.total / workspace.window.limits.max_tokens)
        if before:
            kept = common_prefix(before, text)
            result.shares.append(kept / len(before))
            if action == "nothing":
                result.unchanged_steps += 1
                result.unchanged_broken += text != before
            total = count(text)
            cached = count(text[:kept]) if kept else 0
            # Anthropic: the prefix read from the cache, the rest written to it.
            result.anthropic.append(0.1 * cached + 1.25 * (total - cached))
            result.anthropic_uncached.append(float(total))
            cached_openai = (cached // 128) * 128 if cached >= 1024 else 0
            result.openai.append(0.5 * cached_openai + (total - cached_openai))
        before = text
    return result


async def run(cfg: Config) -> list[Row]:
    steps, seeds = cfg.pick(60, 25), cfg.pick(3, 1)
    root = Path(tempfile.mkdtemp(prefix="cls-cache-"))
    try:
        rels = corpus(root)
        table: list[list[str]] = []
        every: list[float] = []
        low_steps = 0
        unchanged = broken = 0
        cost_a = cost_none = cost_o = 0.0
        for name, mix in MIXES.items():
            for seed in range(seeds):
                result = replay(root, rels, mix, 1000 + seed, steps)
                every.extend(result.shares)
                low_steps += sum(share < 0.5 for share in result.shares)
                unchanged += result.unchanged_steps
                broken += result.unchanged_broken
                cost_a += sum(result.anthropic)
                cost_none += sum(result.anthropic_uncached)
                cost_o += sum(result.openai)
                mean = sum(result.shares) / max(len(result.shares), 1)
                table.append(
                    [
                        f"{name} (seed {seed})",
                        f"{mean:.3f}",
                        f"{sum(s < 0.5 for s in result.shares)}/{len(result.shares)}",
                        f"{sum(result.anthropic) / sum(result.anthropic_uncached):.2f}",
                    ]
                )
        share = sum(every) / len(every)
        requests = len(every)
        print_table(
            ["replay", "reusable share", "steps < half", "Anthropic cost / uncached"],
            table,
            "Bench 17: the render's prefix a prompt cache keeps",
        )
        per_100 = 100 / requests
        print(
            f"input tokens billed per 100 requests: uncached {cost_none * per_100:,.0f}; "
            f"Anthropic with cache {cost_a * per_100:,.0f}; "
            f"OpenAI with cache {cost_o * per_100:,.0f}"
        )
        return [
            Row(
                "reusable share of each render",
                f"{share:.3f}",
                "0.90",
                None,
                ">= 0.90",
                share >= 0.9,
            ),
            Row(
                "steps keeping less than half",
                f"{low_steps}/{requests}",
                "1 in 20",
                None,
                "<= 5%",
                low_steps <= requests / 20,
            ),
            Row(
                "no-change steps that changed a byte",
                f"{broken}/{unchanged}",
                "0",
                None,
                "0",
                broken == 0,
            ),
            Row(
                "Anthropic input cost / uncached",
                f"{cost_a / cost_none:.2f}",
                "1.00",
                None,
                "-",
                None,
            ),
        ]
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    bench_main(run, "Bench 17: prompt cache")
