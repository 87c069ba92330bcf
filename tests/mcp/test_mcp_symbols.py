"""An agent adds a definition by its name, as a person names it."""

from __future__ import annotations

import pytest

from ..cli.conftest import Cli
from .conftest import ERAS, agent, call, refused


@pytest.mark.parametrize("mode", ERAS)
async def test_an_agent_adds_a_definition_by_name(project: Cli, mode: str) -> None:
    (project.workspace / "shapes.py").write_text(
        "class Square:\n    def area(self):\n        return self.side ** 2\n\n"
        "class Circle:\n    def area(self):\n        return 3.14 * self.r ** 2\n"
    )
    async with agent(project, mode) as client:
        added = await call(client, "add_symbol", name="shapes.py::Square.area")
        assert added.startswith("added ctx-1 code shapes.py:2-3 (Square.area)")
        also = await call(client, "add_symbol", name="Circle", path="shapes.py", outline=True)
        assert "shapes.py:5-7 (Circle)" in also
        ambiguous = await refused(client, "add_symbol", name="area")
        assert "shapes.py::Square.area (2-3)" in ambiguous
        assert "shapes.py::Circle.area (6-7)" in ambiguous
    assert "Square.area" in project("ls").stdout


@pytest.mark.parametrize("mode", ERAS)
async def test_an_agent_adds_the_map(project: Cli, mode: str) -> None:
    (project.workspace / "shapes.py").write_text(
        "class Square:\n    def area(self):\n        return 1\n"
    )
    async with agent(project, mode) as client:
        answer = await call(client, "add_map", query="area", tokens=200)
        assert "map of the repository" in answer and "│    def area(self):" in answer
        assert "return 1" not in answer
        first = answer.split()[1]  # "added ctx-N …"
        again = await call(client, "add_map", query="area", tokens=200)
        assert f"it replaces the map {first}, now in the archive" in again
    assert project("ls").stdout.count("map of the repository") == 1
