"""Score keyword, semantic and hybrid retrieval on the relevance set, in process.

Everything is the shipped path: the store's FTS5 search over a real database file,
vectors from the engine's real worker, and ``retrieval.retrieve`` in each mode, the
relevance gate included. ``tests/bench/bench_relevance.py`` asks the same questions of
the real server over LSP, and measures latency; this module is its in-process twin for
quick looks.

    .venv/bin/python -m tests.relevance.score [--split tune|held-out] [--archive NAME]
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from contextls.search import relevance
from contextls.search.retrieval import retrieve
from contextls.semantic.engine import Engine
from contextls.storage.store import Store

from . import dataset, heldout, offtopic, sources, stdlib
from .archive import ROOT, embedded_store
from .dataset import Document, Query

MODES = ("keyword", "semantic", "hybrid")
SMALL_WANTED = 200
SMALL_SIZE = 300
FILES = 10


@dataclass(frozen=True)
class Archive:
    """Documents to archive and the questions to ask of them (``wanted`` by key)."""

    name: str
    documents: tuple[Document, ...]
    queries: tuple[Query, ...]


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def full() -> Archive:
    """Every document; every query."""
    return Archive("full", dataset.documents(), dataset.queries())


def small() -> Archive:
    """About 300 documents, the size of a small project's archive: the wanted documents
    of 200 questions (chosen by a hash) and others, with those questions and every
    off-topic one."""
    on_topic = [q for q in dataset.queries() if q.wanted is not None]
    chosen = sorted(on_topic, key=lambda q: _digest(q.text))[:SMALL_WANTED]
    wanted = {q.wanted for q in chosen}
    others = sorted(
        (d for d in dataset.documents() if d.key not in wanted), key=lambda d: _digest(d.key)
    )
    keep = wanted | {d.key for d in others[: SMALL_SIZE - len(wanted)]}
    documents = tuple(d for d in dataset.documents() if d.key in keep)
    offtopic = tuple(q for q in dataset.queries() if q.wanted is None)
    return Archive("small", documents, (*chosen, *offtopic))


def files() -> Archive:
    """What a person adds to a window: 10 whole modules of the standard library, four
    empty files and an SVG. Each question about a function of those modules wants its
    module's file."""
    modules = sorted(
        (m for m in dataset.MODULES if "." not in m), key=lambda m: _digest(f"file:{m}")
    )[:FILES]
    docs = []
    for module in modules:
        path = sources.stdlib_file(module)
        docs.append(
            Document(f"file:{module}", f"{module}.py", "", "file", "python", path.read_text())
        )
    for name in ("__init__.py", "pkg/__init__.py", "tests/__init__.py", "empty.txt"):
        docs.append(Document(f"empty:{name}", name, "", "file", "", ""))
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16">'
        '<circle cx="8" cy="8" r="7"/></svg>\n'
    )
    docs.append(Document("svg", "icon.svg", "", "file", "", svg))
    module_of = {f.key: f.unit for f in dataset.functions()}
    asked = []
    for q in dataset.queries():
        if q.wanted is None:
            asked.append(q)
        elif module_of.get(q.wanted) in modules and q.kind != "identifier":
            asked.append(Query(q.text, f"file:{module_of[q.wanted]}", q.kind, q.split))
    return Archive("files", tuple(docs), tuple(asked))


def unit_slice() -> Archive:
    """What the unit suite scores in a few seconds, from the standard library alone (no
    npm): the earlier set's modules, a few functions of each besides the wanted ones, its
    paraphrases and two descriptions per module, and 40 off-topic questions; tuning half
    only."""
    asked: list[Query] = [Query(text, key, "paraphrase", "tune") for text, key in stdlib.QUERIES]
    docs: list[Document] = []
    for module in stdlib.MODULES:
        functions = sources.python_module(module)[0]
        described = [f for f in functions if 5 <= len(f.doc.split()) <= 40]
        for f in sorted(described, key=lambda f: _digest(f.key))[:2]:
            asked.append(Query(f.doc, f.key, "docstring", "tune"))
        wanted = {q.wanted for q in asked}
        others = sorted((f for f in functions if f.key not in wanted), key=lambda f: _digest(f.key))
        for f in [f for f in functions if f.key in wanted] + others[:3]:
            docs.append(Document(f.key, f.path, f.symbol, "code", f.language, f.code))
    unique = {d.key: d for d in docs}
    tune = [text for text in offtopic.OFF_TOPIC if dataset.split_of(text) == "tune"]
    asked.extend(Query(t, None, "offtopic", "tune") for t in sorted(tune, key=_digest)[:40])
    return Archive("unit", tuple(unique.values()), tuple(asked))


def third_party(size: int) -> Callable[[], Archive]:
    """About ``size`` functions of the held-out third-party packages (``heldout``)."""

    def made() -> Archive:
        documents, queries = heldout.archive("held-out", size)
        return Archive(f"third-{size}", documents, queries)

    return made


ARCHIVES: dict[str, Callable[[], Archive]] = {
    "full": full,
    "small": small,
    "files": files,
    "unit": unit_slice,
    **{f"third-{size}": third_party(size) for size in heldout.SIZES},
}


@dataclass(frozen=True)
class Scores:
    queries: int
    recall_at_1: float
    recall_at_3: float
    recall_at_10: float
    mrr: float
    offtopic: int
    junk: float
    """The share of off-topic questions with any hit."""

    def line(self) -> str:
        return (
            f"recall@1 {self.recall_at_1:.2f}  @3 {self.recall_at_3:.2f}  "
            f"@10 {self.recall_at_10:.2f}  MRR {self.mrr:.2f}  "
            f"junk {self.junk:.3f} ({round(self.junk * self.offtopic)}/{self.offtopic})"
        )


def scores(answers: Sequence[tuple[Query, list[str]]]) -> Scores:
    """Recall and junk of (question, keys of its hits best first) pairs."""
    ranks = []
    junk = 0
    offtopic = 0
    for query, keys in answers:
        if query.wanted is None:
            offtopic += 1
            junk += bool(keys)
        else:
            ranks.append(keys.index(query.wanted) if query.wanted in keys else None)
    n = max(len(ranks), 1)
    return Scores(
        len(ranks),
        sum(r is not None and r < 1 for r in ranks) / n,
        sum(r is not None and r < 3 for r in ranks) / n,
        sum(r is not None and r < 10 for r in ranks) / n,
        sum(1 / (r + 1) for r in ranks if r is not None) / n,
        offtopic,
        junk / max(offtopic, 1),
    )


class Bench:
    """An archive in a temporary store file, embedded (once per cache), searched in process."""

    def __init__(self, directory: Path, archive: Archive, keep: bool = True) -> None:
        self.archive = archive
        path = embedded_store(archive.documents, directory / "store.db", keep=keep)
        self.store = Store(path)
        self.engine = Engine(self.store.location)
        self.key_of = {f"ctx-{n}": doc.key for n, doc in enumerate(archive.documents, 1)}

    def close(self) -> None:
        self.engine.stop()
        self.store.close()

    def keys(self, query: str, mode: str, limit: int = 10) -> list[str]:
        found = retrieve(self.store, self.engine, ROOT, query, limit, None, mode)
        assert found.mode == mode, found.warning
        return [self.key_of[hit.item.id] for hit in found.hits]

    def score(self, mode: str, split: str | None = None) -> Scores:
        asked = [q for q in self.archive.queries if split is None or q.split == split]
        return scores([(q, self.keys(q.text, mode)) for q in asked])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("tune", "held-out"), default="tune")
    parser.add_argument("--archive", choices=sorted(ARCHIVES), action="append")
    parser.add_argument(
        "--no-gate",
        action="store_true",
        help="every candidate passes: what the ranking alone finds",
    )
    args = parser.parse_args()
    if args.no_gate:
        relevance.Gate.evidence = lambda self, item, cosine: ("ungated",)  # type: ignore[method-assign]
    for name in args.archive or ["small", "full", "files"]:
        archive = ARCHIVES[name]()
        with tempfile.TemporaryDirectory() as directory:
            bench = Bench(Path(directory), archive)
            print(f"== {name}: {len(archive.documents)} documents, split {args.split}")
            later = set(offtopic.LATER)
            for mode in MODES:
                print(f"  {mode:9} {bench.score(mode, args.split).line()}", flush=True)
                asked = [q for q in archive.queries if q.text in later and q.split == args.split]
                fresh = scores([(q, bench.keys(q.text, mode)) for q in asked])
                print(f"            of them written after the first look: junk {fresh.junk:.3f}")
            bench.close()


if __name__ == "__main__":
    main()
