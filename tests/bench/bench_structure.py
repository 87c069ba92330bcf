"""Bench 13: the code's structure on a 1,000-file repository, against tree-sitter's own
parse of the same files.

The repository is the first 1,000 Python files of the interpreter's standard library
(third-party code, 1,000 files, ~10 MB), copied into a fresh folder. In-process, on one
thread (the maps' process parses with the same code in two workers, and ranks with it):
``CodeIndex.all_facts`` lists, reads, parses and tags every file the first time (the
floor: ``tree_sitter.Parser.parse`` of the same texts, already in memory); then one file
changes and the index is brought up to date (the floor: parsing that file); a symbol is
resolved by its qualified name in a file (parsed again, as a follow does) (the floor:
parsing it); and a map of 2,048 tokens is ranked and fitted over the whole repository,
then again for another window (the live re-rank: what each file uses is kept while the
files stay) (the floor: parsing every file
once). Rounds take turns with their floors; figures are medians.

Targets: first parse-and-tag <= 3x the parse; a symbol <= 3x its file's parse; the
map <= 1x a parse of the repository (ranking must cost less than reading it again),
and ranking again for another window <= 0.5x.
After one change the index stats every file: reported, with the floor, no target.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

from _harness import Config, bench_main
from _stats import Row, median, print_table, ratio_row

from contextls.app.code_index import CodeIndex
from contextls.app.sources import Sources
from contextls.app.tokenizers import tokenizer
from contextls.structure.parse import parse
from contextls.structure.repomap import fit, rank, shown
from contextls.structure.resolve import resolve
from contextls.structure.symbols import symbols
from contextls.structure.uses import Uses

MAX_BYTES = 1_000_000


def repository(target: Path, count: int) -> list[str]:
    stdlib = Path(json.__file__).parent.parent
    chosen = sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts)[:count]
    rels = []
    for path in chosen:
        rel = path.relative_to(stdlib).as_posix()
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / rel)
        rels.append(rel)
    return rels


def parse_all(texts: list[bytes]) -> float:
    started = time.perf_counter()
    for text in texts:
        parse(text, "python")
    return time.perf_counter() - started


async def run(cfg: Config) -> list[Row]:
    count, rounds = cfg.pick(1000, 200), cfg.pick(5, 2)
    root = Path(tempfile.mkdtemp(prefix="cls-structure-"))
    try:
        rels = repository(root, count)
        texts = [(root / rel).read_bytes() for rel in rels]
        megabytes = sum(map(len, texts)) / 1e6
        print(f"Bench 13: {len(rels):,} files, {megabytes:.1f} MB of Python", flush=True)
        parse_all(texts[:10])  # the grammar loaded, as in a running daemon
        count_tokens = tokenizer("o200k_base").count
        count_tokens("warm")
        fig: dict[str, list[float]] = {
            k: []
            for k in ("first", "floor", "change", "one", "symbol", "symbol_floor", "map", "rerank")
        }
        listed = 0
        for round_number in range(rounds):
            fig["floor"].append(parse_all(texts))
            index = CodeIndex(Sources(root, lambda uri: None))
            known: list[Uses] = []
            started = time.perf_counter()
            files = dict(index.all_facts(MAX_BYTES))
            fig["first"].append(time.perf_counter() - started)

            changed = root / rels[round_number % len(rels)]
            changed.write_text(changed.read_text() + f"\n\ndef added_{round_number}():\n    pass\n")
            started = time.perf_counter()
            files = dict(index.all_facts(MAX_BYTES))
            fig["change"].append(time.perf_counter() - started)
            fig["one"].append(parse_all([changed.read_bytes()]))

            target = next(rel for rel in rels if any(s.parent for s in files[rel].symbols))
            wanted = next(s for s in files[target].symbols if s.parent and s.occurrence == 1)
            source = (root / target).read_text()
            fig["symbol_floor"].append(parse_all([source.encode()]))
            started = time.perf_counter()
            found = resolve(symbols(source, "python"), wanted.qualified)
            fig["symbol"].append(time.perf_counter() - started)
            assert [s.lines for s in found] == [wanted.lines]

            started = time.perf_counter()
            ranked = rank(files, focus_files=[target], known=known)
            text, listed = fit(shown(ranked, files), count_tokens, 2048)
            fig["map"].append(time.perf_counter() - started)
            assert count_tokens(text) <= 2048
            other = rels[(round_number * 31 + 7) % len(rels)]
            started = time.perf_counter()
            ranked = rank(files, focus_files=[other], known=known)
            text, _ = fit(shown(ranked, files), count_tokens, 2048)
            fig["rerank"].append(time.perf_counter() - started)
            assert count_tokens(text) <= 2048
        m = {k: median(v) * 1e9 for k, v in fig.items()}
        print_table(
            ["step", "median", "floor"],
            [
                [
                    "parse-and-tag, first",
                    f"{m['first'] / 1e6:,.0f} ms",
                    f"{m['floor'] / 1e6:,.0f} ms",
                ],
                ["after one change", f"{m['change'] / 1e6:,.1f} ms", f"{m['one'] / 1e6:,.2f} ms"],
                [
                    "resolve a symbol",
                    f"{m['symbol'] / 1e6:,.2f} ms",
                    f"{m['symbol_floor'] / 1e6:,.2f} ms",
                ],
                [
                    "map again, for another window",
                    f"{m['rerank'] / 1e6:,.0f} ms",
                    f"{m['floor'] / 1e6:,.0f} ms",
                ],
                [
                    f"map of 2,048 tokens ({listed} definitions)",
                    f"{m['map'] / 1e6:,.0f} ms",
                    f"{m['floor'] / 1e6:,.0f} ms",
                ],
            ],
            "Bench 13: structure of a 1,000-file repository",
        )
        return [
            ratio_row("parse-and-tag 1,000 files / parse", m["first"], m["floor"], 3.0),
            ratio_row("after one change / parse of it", m["change"], m["one"], None),
            ratio_row("resolve a symbol / parse of its file", m["symbol"], m["symbol_floor"], 3.0),
            ratio_row("map of 2k tokens / parse of all", m["map"], m["floor"], 1.0),
            ratio_row("map for another window / parse of all", m["rerank"], m["floor"], 0.5),
        ]
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    bench_main(run, "Bench 13: structure")
