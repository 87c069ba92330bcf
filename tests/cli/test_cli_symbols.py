"""``contextls add FILE::NAME`` and ``--symbol NAME``, as a person types them."""

from __future__ import annotations

import json

from .conftest import Cli

SHAPES = (
    "class Square:\n    def area(self):\n        return self.side ** 2\n\n"
    "class Circle:\n    def area(self):\n        return 3.14 * self.r ** 2\n"
)


def test_a_definition_by_its_file_and_name(cli: Cli) -> None:
    cli.write("src/shapes.py", SHAPES)
    run = cli("add", "src/shapes.py::Circle.area")
    assert run.stdout.startswith("added ctx-1 code src/shapes.py:6-7 (Circle.area)")
    assert "method" in run.stdout.splitlines()[0]
    whole = cli("add", "src/shapes.py::Square", "--json")
    assert json.loads(whole.stdout)["items"][0]["metadata"]["endLine"] == 3


def test_a_bare_name_that_fits_several_lists_each_as_an_argument(cli: Cli) -> None:
    cli.write("src/shapes.py", SHAPES)
    run = cli("add", "--symbol", "area", code=1)
    assert "area names 2 definitions; add one of them:" in run.stderr
    assert "contextls add src/shapes.py::Square.area    (method, lines 2-3)" in run.stderr
    assert "contextls add src/shapes.py::Circle.area    (method, lines 6-7)" in run.stderr
    assert cli("ls").stdout.count("ctx-") == 0


def test_a_name_not_defined_suggests_the_near_ones_and_a_language_not_parsed_says_so(
    cli: Cli,
) -> None:
    cli.write("src/shapes.py", SHAPES)
    cli.write("notes.txt", "hello\n")
    run = cli("add", "src/shapes.py::Circle.aera", code=1)
    assert "src/shapes.py defines no Circle.aera; it defines Circle.area" in run.stderr
    prose = cli("add", "notes.txt::hello", code=1)
    assert "not of .txt files; add its lines instead (FILE:START-END)" in prose.stderr
