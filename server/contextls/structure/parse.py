"""Text to tree: one parser and one compiled query per language, made on first use."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from contextls.structure.languages import grammar
from contextls.structure.queries import DEFINITIONS

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


def matches(
    tree: tree_sitter.Tree, language: str
) -> list[tuple[int, dict[str, list[tree_sitter.Node]]]]:
    """Every definition the language's query finds, in the order of the text."""
    import tree_sitter

    return tree_sitter.QueryCursor(definitions_query(language)).matches(tree.root_node)
