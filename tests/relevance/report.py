"""Score search on the third-party set (``heldout``), in process, both sides of the trade.

For each archive and mode: recall@1/@3/@10 and MRR of the questions whose function is in
the archive, the share of off-topic questions with any hit (junk), the share of
paraphrases and of docstring questions with no hit at all, and recall@3 per language
(Python against JavaScript and TypeScript) and per kind of question. Everything runs
the shipped path (``retrieval.retrieve`` over a real store file embedded by the real
worker), as ``score`` does.

    .venv/bin/python -m tests.relevance.report [--side tune|held-out] [--size 100 ...]
"""

from __future__ import annotations

import argparse
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from contextls.search import relevance

from . import dataset, heldout, offtopic
from .dataset import Query
from .score import MODES, Archive, Bench, scores


def archive(side: str, size: int) -> Archive:
    documents, queries = heldout.archive(side, size)
    return Archive(f"{side}-{size}", documents, queries)


@dataclass(frozen=True)
class Trade:
    """Both sides of one mode's answers: what it finds, and what it should not."""

    recall_at_3: float
    python: float
    js: float
    paraphrase_nohit: float
    junk: float


def trade(answers: Sequence[tuple[Query, list[str]]]) -> Trade:
    by_language: dict[str, list[tuple[Query, list[str]]]] = defaultdict(list)
    paraphrases = [keys for q, keys in answers if q.kind == "paraphrase"]
    for query, keys in answers:
        if query.wanted is not None:
            by_language[heldout.language_of(query.wanted)].append((query, keys))
    overall = scores(answers)
    return Trade(
        overall.recall_at_3,
        scores(by_language["python"]).recall_at_3,
        scores(by_language["js"]).recall_at_3,
        sum(not keys for keys in paraphrases) / max(len(paraphrases), 1),
        overall.junk,
    )


def lines(answers: Sequence[tuple[Query, list[str]]]) -> list[str]:
    """The figures of one mode: overall, no-hit rates, per language, per kind."""
    overall = scores(answers)
    by_language: dict[str, list[tuple[Query, list[str]]]] = defaultdict(list)
    by_kind: dict[str, list[tuple[Query, list[str]]]] = defaultdict(list)
    for query, keys in answers:
        if query.wanted is not None:
            by_language[heldout.language_of(query.wanted)].append((query, keys))
            by_kind[query.kind].append((query, keys))
    nohit = {
        kind: sum(not keys for _, keys in found) / len(found) for kind, found in by_kind.items()
    }
    out = [overall.line()]
    out.append(
        "no hit: "
        + "  ".join(
            f"{kind} {nohit[kind]:.3f}" for kind in ("paraphrase", "docstring") if kind in nohit
        )
        + "  | R@3 "
        + "  ".join(
            f"{lang} {scores(found).recall_at_3:.2f}" for lang, found in sorted(by_language.items())
        )
    )
    out.append(
        "R@3 by kind: "
        + "  ".join(
            f"{kind} {scores(found).recall_at_3:.2f} ({len(found)})"
            for kind, found in sorted(by_kind.items())
        )
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--side", choices=("tune", "held-out"), default="tune")
    parser.add_argument("--size", type=int, action="append")
    parser.add_argument("--mode", choices=MODES, action="append")
    parser.add_argument("--no-gate", action="store_true", help="every candidate passes")
    args = parser.parse_args()
    if args.no_gate:
        relevance.Gate.evidence = lambda self, item, cosine: ("ungated",)  # type: ignore[method-assign]
    for size in args.size or heldout.SIZES:
        found = archive(args.side, size)
        with tempfile.TemporaryDirectory() as directory:
            bench = Bench(Path(directory), found)
            on_topic = sum(q.wanted is not None for q in found.queries)
            print(f"== {found.name}: {len(found.documents)} documents, {on_topic} questions")
            for mode in args.mode or MODES:
                answers = [(q, bench.keys(q.text, mode)) for q in found.queries]
                for n, line in enumerate(lines(answers)):
                    print(f"  {mode if n == 0 else '':9} {line}", flush=True)
                more = [t for t in offtopic.OFF_TOPIC if dataset.split_of(t) == args.side]
                junk = [t for t in more if bench.keys(t, mode)]
                print(
                    f"{'':11} the first set's {args.side} off-topic questions with a hit: "
                    f"{len(junk) / len(more):.3f} ({len(junk)}/{len(more)}) {junk[:6]}"
                )
            bench.close()


if __name__ == "__main__":
    main()
