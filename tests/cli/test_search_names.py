"""Code is found by the words of its names: ``wednesday`` finds ``previousWednesday``,
"is weekend" ``isWeekend``, in every mode, and a name that is an English word
(``quote``) finds the module that defines it. The archive is what a person adds: a
JavaScript file of date helpers beside real modules of Python's standard library."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from contextls.protocol import SearchResult

from .conftest import Cli

DATES = """\
import { addDays, getDay } from './core.js';

export function isWeekend(date) {
  const day = getDay(date);
  return day === 0 || day === 6;
}

export function isWednesday(date) {
  return getDay(date) === 3;
}

export function previousWednesday(date) {
  const back = (getDay(date) + 7 - 3) % 7 || 7;
  return addDays(date, -back);
}

export function nextWednesday(date) {
  const ahead = (3 - getDay(date) + 7) % 7 || 7;
  return addDays(date, ahead);
}

export function differenceInBusinessDays(later, earlier) {
  let count = 0;
  for (let day = earlier; day < later; day = addDays(day, 1)) {
    if (!isWeekend(day)) count += 1;
  }
  return count;
}
"""
MODULES = ("shlex", "textwrap", "bisect", "heapq", "glob", "copy", "urllib/parse")


@pytest.fixture
def archived(cli: Cli) -> Cli:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for module in MODULES:
        cli.write(f"lib/{module}.py", (stdlib / f"{module}.py").read_text(encoding="utf-8"))
    cli.write("web/dates.js", DATES)
    cli("config", "set", "maxTokens", "200000")
    cli("add", "lib", "web")
    cli("clear")
    cli("search", "--wait", "shlex", code=None)  # until everything is embedded
    return cli


def hits(cli: Cli, query: str, mode: str) -> list[tuple[str, tuple[str, ...]]]:
    run = cli("search", "--mode", mode, query, "--json", code=None)
    return [(hit.item.label, tuple(hit.modes)) for hit in run.decode(SearchResult).hits]


def test_a_word_of_a_camel_case_name_finds_it_in_every_mode(archived: Cli) -> None:
    # One archive for every question: adding and embedding it is most of the test's time.
    for query in ("wednesday", "previous wednesday", "weekend", "is weekend"):
        for mode in ("keyword", "hybrid", "semantic"):
            found = hits(archived, query, mode)
            assert found and found[0][0] == "web/dates.js", (mode, query, found)
        keyword = dict(hits(archived, query, "keyword"))
        assert "keyword" in keyword["web/dates.js"], (query, keyword)


def test_a_name_is_found_whole_and_an_english_word_name_by_its_word(archived: Cli) -> None:
    for query in ("previousWednesday", "differenceInBusinessDays"):
        found = hits(archived, query, "keyword")
        assert found[0][0] == "web/dates.js" and "keyword" in found[0][1], (query, found)
    for mode in ("keyword", "hybrid"):
        labels = [label for label, _ in hits(archived, "quote", mode)]
        assert "lib/urllib/parse.py" in labels[:3], (mode, labels)
        labels = [label for label, _ in hits(archived, "unquote", mode)]
        assert labels[:1] == ["lib/urllib/parse.py"], (mode, labels)
