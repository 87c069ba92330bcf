"""One relevance gate, every path: a question about anything but the code finds nothing in
any search mode nor in ``show --query``, and a real question finds its file there, saying
by which evidence. The archive is what a person adds: real modules of Python's standard
library, empty ``__init__.py`` files and an SVG."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from contextls.protocol import SearchResult

from .conftest import Cli

MODULES = ("shlex", "textwrap", "fnmatch", "bisect", "calendar", "heapq", "glob", "copy")
OFF_TOPIC = ("recipe for banana bread", "weather in Paris tomorrow", "xyzzyplugh")
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><circle r="7"/></svg>\n'


@pytest.fixture
def archived_stdlib(cli: Cli) -> Cli:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for module in MODULES:
        cli.write(f"lib/{module}.py", (stdlib / f"{module}.py").read_text(encoding="utf-8"))
    for package in ("lib", "lib/a", "lib/b", "tests"):
        cli.write(f"{package}/__init__.py", "")
    cli.write("static/icon.svg", SVG)
    cli("config", "set", "maxTokens", "200000")
    cli("add", "lib", "static", "tests")
    cli("clear")
    cli("search", "--wait", "shlex", code=None)  # until everything is embedded
    return cli


def test_off_topic_questions_find_nothing_in_any_mode_nor_in_show(archived_stdlib: Cli) -> None:
    for query in OFF_TOPIC:
        for mode in ("keyword", "semantic", "hybrid"):
            run = archived_stdlib("search", "--mode", mode, query, "--json", code=None)
            labels = [hit.item.label for hit in run.decode(SearchResult).hits]
            assert (run.code, labels) == (1, []), (mode, query)
        shown = archived_stdlib("show", "--query", query)
        assert "Relevant history" not in shown.stdout, query
        auto = archived_stdlib("show", "--query", query, "--auto")
        assert "Relevant history" not in auto.stdout, query


def test_a_real_question_finds_its_file_and_says_by_what(archived_stdlib: Cli) -> None:
    question = "split a command line into arguments like a shell would"
    for mode in ("semantic", "hybrid"):
        found = archived_stdlib("search", "--mode", mode, question, "--json").decode(SearchResult)
        labels = [hit.item.label for hit in found.hits]
        assert labels[0] == "lib/shlex.py", (mode, labels)
        assert "semantic" in found.hits[0].modes
    exact = archived_stdlib("search", "--mode", "keyword", "insort_right", "--json")
    (hit, *_) = exact.decode(SearchResult).hits
    assert hit.item.label == "lib/bisect.py" and "keyword" in hit.modes
    shown = archived_stdlib("show", "--query", question)
    assert "Relevant history" in shown.stdout and "def split(" in shown.stdout
