"""Definitions of real third-party code in every language, against two oracles: the
grammar's own ``tags.scm`` (what tree-sitter itself calls a definition) and line
spans read by hand from the files. The files and their licences are in
tests/data/structure (SOURCES.md says where each came from)."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import pytest
import tree_sitter

from contextls.structure.languages import SPECS, grammar, language_of
from contextls.structure.parse import parse
from contextls.structure.resolve import resolve
from contextls.structure.symbols import symbols

DATA = Path(__file__).resolve().parents[1] / "data" / "structure"
CODE = sorted(
    path
    for path in DATA.rglob("*")
    if path.is_file() and path.suffix and path.suffix not in (".md", ".txt")
)
LANGUAGE = {"buffer_info.h": "cpp"}
"""A C++ header ends in ``.h`` like a C one; its language is named, as an editor would."""

HAND_READ = {
    "go/errors.go": {"withStack.Format": (165, 179), "Wrap": (184, 196)},
    "go/stack.go": {"Frame.MarshalText": (88, 94), "StackTrace": (97, 97)},
    "rust/lib.rs": {"Version.parse": (431, 433), "Version": (161, 168)},
    "javascript/semver.js": {"SemVer.compareMain": (125, 149), "SemVer": (25, 348)},
    "typescript/queryClient.ts": {"QueryClient.getDefaultOptions": (898, 900)},
    "typescript/QueryClientProvider.tsx": {"QueryClientProvider": (68, 84)},
    "java/CallbackContext.java": {"CallbackContext.success@7": (121, 123)},
    "c/_speedups.c": {"escape_unicode_kind2": (100, 123)},
    "cpp/buffer_info.h": {"buffer_info.item_type_is_equivalent_to": (163, 166)},
}


def language(path: Path) -> str:
    found = LANGUAGE.get(path.name) or language_of(path.name)
    assert found is not None, path
    return found


def tags_definitions(text: str, lang: str) -> list[tuple[str, int, int, str]]:
    """(name, first line, last line, node type) of each definition tags.scm finds, where
    it means one: a C prototype or a forward ``struct x;`` declares, it defines nothing."""
    modules = [SPECS[lang].module]
    if lang in ("typescript", "tsx"):
        modules = ["tree_sitter_javascript", *modules]  # the TypeScript query inherits it
    source = "\n".join(
        (importlib.resources.files(module) / "queries" / "tags.scm").read_text()
        for module in modules
    )
    query = tree_sitter.Query(grammar(lang), source)
    tree = parse(text.encode(), lang)
    found = []
    for _, captures in tree_sitter.QueryCursor(query).matches(tree.root_node):
        definition = next((v[0] for k, v in captures.items() if k.startswith("definition.")), None)
        if definition is None or "name" not in captures:
            continue
        if definition.type in ("assignment_expression", "pair"):
            continue  # a function stored in a property: not a definition by name here
        if definition.type == "function_declarator" and not _inside_definition(definition):
            continue
        if (
            definition.type.endswith("_specifier")
            and definition.child_by_field_name("body") is None
        ):
            continue
        name = (captures["name"][0].text or b"").decode()
        start, end = definition.start_point.row + 1, definition.end_point.row + 1
        found.append((name, start, end, definition.type))
    return found


def _inside_definition(node: tree_sitter.Node) -> bool:
    """The declarator of a function's definition (not of a declaration in its body)."""
    parent = node.parent
    while parent is not None and parent.type.endswith("declarator"):
        parent = parent.parent
    return parent is not None and parent.type == "function_definition"


@pytest.mark.parametrize("path", CODE, ids=lambda p: str(p.relative_to(DATA)))
def test_every_definition_tree_sitter_tags_is_found_by_name(path: Path) -> None:
    lang = language(path)
    text = path.read_text()
    found = symbols(text, lang)
    expected = tags_definitions(text, lang)
    assert expected, "the oracle found nothing: the test would prove nothing"
    missing = [
        (name, start, end, kind)
        for name, start, end, kind in expected
        if not any(
            s.start_line <= start and end <= s.end_line
            for s in found
            if s.name == name.split("::")[-1]
        )
    ]
    assert not missing, missing
    for symbol in found:  # and each resolves by the name it is listed under
        if symbol.listed:
            assert symbol in resolve(found, symbol.display), symbol


@pytest.mark.parametrize("where", sorted(HAND_READ))
def test_qualified_names_resolve_to_the_lines_read_by_hand(where: str) -> None:
    path = DATA / where
    found = symbols(path.read_text(), language(path))
    for name, lines in HAND_READ[where].items():
        assert [s.lines for s in resolve(found, name)] == [lines], name


def test_each_language_has_third_party_code() -> None:
    assert {language(path) for path in CODE} == set(SPECS) - {"python"}  # python: the stdlib
