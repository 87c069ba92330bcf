"""Every ``def`` and ``class`` of three standard library packages resolves by its
qualified name to the lines Python's own ``ast`` gives it (decorators included, as
``inspect.getsource`` shows them). Code nobody here wrote or tuned on."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from contextls.structure.resolve import resolve
from contextls.structure.symbols import symbols

STDLIB = Path(json.__file__).parent.parent
PACKAGES = ("json", "email", "asyncio")
FILES = sorted(path for package in PACKAGES for path in (STDLIB / package).rglob("*.py"))

Defined = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def ast_definitions(tree: ast.Module) -> list[tuple[str, int, int]]:
    """(qualified name, first line, last line) of every def and class, in source order."""
    found: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, Defined):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                assert child.end_lineno is not None
                found.append((name, first, child.end_lineno))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return sorted(found, key=lambda f: (f[1], -f[2]))


def test_the_packages_are_there() -> None:
    assert len(FILES) > 60


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(STDLIB)))
def test_every_definition_resolves_to_the_lines_ast_gives(path: Path) -> None:
    text = path.read_text()
    expected = ast_definitions(ast.parse(text))
    found = symbols(text, "python")
    assert [(s.qualified, s.start_line, s.end_line) for s in found] == expected
    seen: dict[str, int] = {}
    for name, first, last in expected:
        seen[name] = seen.get(name, 0) + 1
        asked = name if seen[name] == 1 else f"{name}@{seen[name]}"
        matches = [s for s in resolve(found, asked) if s.qualified == name]
        if [n for n, _, _ in expected].count(name) == 1:
            assert [(s.start_line, s.end_line) for s in resolve(found, name)] == [(first, last)]
        assert (first, last) in [(s.start_line, s.end_line) for s in matches], asked
