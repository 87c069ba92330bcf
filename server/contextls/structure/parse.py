"""Text to tree: one parser and one compiled query per language, made on first use."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from contextls.structure.languages import grammar
from contextls.structure.queries import DEFINITIONS, STATEMENTS, Statements

if TYPE_CHECKING:
    import tree_sitter

_local = threading.local()
"""A parser per thread and language: tree-sitter lets go of the GIL while it parses, and
one parser must not parse two texts at once (search by meaning parses on its worker)."""
_queries: dict[str, tree_sitter.Query] = {}


def parse(source: bytes, language: str) -> tree_sitter.Tree:
    """The syntax tree of ``source`` (UTF-8); Unsupported when there is no grammar."""
    parsers: dict[str, tree_sitter.Parser] = _local.__dict__.setdefault("parsers", {})
    parser = parsers.get(language)
    if parser is None:
        import tree_sitter

        parser = parsers[language] = tree_sitter.Parser(grammar(language))
    return parser.parse(source)


def definitions_query(language: str) -> tree_sitter.Query:
    query = _queries.get(language)
    if query is None:
        import tree_sitter

        query = _queries[language] = tree_sitter.Query(grammar(language), DEFINITIONS[language])
    return query


Definition = tuple[int, str, "tree_sitter.Node", "tree_sitter.Node", "tree_sitter.Node | None"]
"""A definition the language's query finds: the pattern's index, the definition's kind
(its capture without ``def.``), its node, its name's node, and its receiver's (a Go
method's type) if it has one."""


def definitions(tree: tree_sitter.Tree, language: str, source: bytes) -> list[Definition]:
    """Every definition the language's query finds in ``tree`` (the parse of ``source``),
    in the order of the text."""
    statements = STATEMENTS.get(language)
    if statements is not None and not tree.root_node.has_error:
        return _statement_definitions(tree, statements, source)
    return queried_definitions(tree, language)


def queried_definitions(tree: tree_sitter.Tree, language: str) -> list[Definition]:
    """Every definition the language's query matches in ``tree``, in the order of the text."""
    import tree_sitter

    found: list[Definition] = []
    cursor = tree_sitter.QueryCursor(definitions_query(language))
    for pattern, captures in cursor.matches(tree.root_node):
        kind, node = next((k[4:], v[0]) for k, v in captures.items() if k.startswith("def."))
        receiver = captures.get("receiver")
        found.append((pattern, kind, node, captures["name"][0], receiver[0] if receiver else None))
    return found


def _statement_definitions(
    tree: tree_sitter.Tree, statements: Statements, source: bytes
) -> list[Definition]:
    """The query's matches, found by walking only the nodes that may hold a statement (a
    tree without errors has its definitions nowhere else), and of those only the ones whose
    text holds a definition's keyword (most function bodies hold no definition: CPython's
    ``Lib/`` walks 340,000 nodes rather than 1,230,000)."""
    patterns = {
        node_type: (index, capture.removeprefix("def."))
        for index, (node_type, capture) in enumerate(statements.definitions.items())
    }
    holders = statements.holders
    keywords = statements.keywords
    find = source.find
    found: list[Definition] = []
    cursor = tree.walk()
    while True:
        node = cursor.node
        assert node is not None
        node_type = node.type
        pattern = patterns.get(node_type)
        name = node.child_by_field_name("name") if pattern is not None else None
        if pattern is not None and name is not None:
            found.append((pattern[0], pattern[1], node, name, None))
        if node_type in holders:
            # A definition's own keyword comes before its name: what it holds is after.
            start, end = (node if name is None else name).start_byte, node.end_byte
            if _holds(find, keywords, start, end) and cursor.goto_first_child():
                continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return found


def _holds(
    find: Callable[[bytes, int, int], int], keywords: tuple[bytes, ...], start: int, end: int
) -> bool:
    """Whether the text from ``start`` to ``end`` holds one of ``keywords``."""
    # A loop, not any(): a generator's frame costs a fifth of the walk.
    for keyword in keywords:  # noqa: SIM110
        if find(keyword, start, end) >= 0:
            return True
    return False
