"""Every ``def`` and ``class`` of three standard library packages resolves by its
qualified name to the lines Python's own ``ast`` gives it (decorators included, as
``inspect.getsource`` shows them). Code nobody here wrote or tuned on."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from contextls.structure.parse import Definition, definitions, parse, queried_definitions
from contextls.structure.resolve import resolve
from contextls.structure.symbols import symbols

STDLIB = Path(json.__file__).parent.parent
PACKAGES = ("json", "email", "asyncio")
GRAMMAR = ("test/test_grammar.py", "test/test_patma.py", "test/test_except_star.py")
"""Definitions in every compound statement the language has (``match``, ``except*``...)."""
FILES = sorted(path for package in PACKAGES for path in (STDLIB / package).rglob("*.py")) + [
    STDLIB / name for name in GRAMMAR if (STDLIB / name).exists()
]

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


def test_walking_statements_finds_what_the_query_finds() -> None:
    """A tree without errors is walked statement by statement rather than queried: the
    same matches, in the same order, over a quarter of the standard library."""
    every = sorted(STDLIB.glob("**/*.py"))
    compared = 0
    for path in [*every[::4], *FILES]:
        if "site-packages" in path.parts:
            continue
        source = path.read_bytes()
        tree = parse(source, "python")
        if tree.root_node.has_error:
            continue
        walked = definitions(tree, "python", source)
        queried = queried_definitions(tree, "python")
        assert _spans(walked) == _spans(queried), path
        compared += 1
    assert compared > 400


EVERY_STATEMENT = """\
if a:
    def in_if(): pass
elif b:
    def in_elif(): pass
else:
    def in_else(): pass
for x in y:
    def in_for(): pass
else:
    def in_for_else(): pass
while a:
    def in_while(): pass
else:
    def in_while_else(): pass
try:
    def in_try(): pass
except E:
    def in_except(): pass
else:
    def in_try_else(): pass
finally:
    def in_finally(): pass
try:
    pass
except* E:
    def in_except_star(): pass
with a as b, c:
    def in_with(): pass
async def outer():
    async with a:
        def in_async_with(): pass
    async for x in y:
        def in_async_for(): pass
match command:
    case [x, *_] if x:
        def in_case(): pass
    case _:
        class InCase:
            @property
            def decorated(self): pass
"""


def test_a_definition_in_every_kind_of_statement_is_walked_to() -> None:
    tree = parse(EVERY_STATEMENT.encode(), "python")
    assert not tree.root_node.has_error
    found = symbols(EVERY_STATEMENT, "python")
    expected = ast_definitions(ast.parse(EVERY_STATEMENT))
    assert [(s.qualified, s.start_line, s.end_line) for s in found] == expected
    assert len(expected) == 19


def _spans(found: list[Definition]) -> list[tuple[object, ...]]:
    return [
        (pattern, kind, *((n.start_byte, n.end_byte, n.type) for n in (node, name)), receiver)
        for pattern, kind, node, name, receiver in found
    ]


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
