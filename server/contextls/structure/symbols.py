"""The definitions of a file, each with its qualified name, kind and line span.

A qualified name joins the names of the definitions that hold it (``Parser.parse``,
``Buffer.Write`` for a Go method of ``*Buffer``, ``Stack.push`` for a Rust ``impl
Stack``); C++'s ``A::b`` is written ``A.b`` too, and a name read from a person may
use either. A span runs from the first line of the definition (its decorators,
``template <…>``, ``#[attributes]`` and ``export`` included: what ``inspect.getsource``
shows for Python) to its last line.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from contextls.structure import budget, elisp
from contextls.structure.languages import SPECS, Unsupported
from contextls.structure.model import CONTAINERS, Fold, Symbol
from contextls.structure.parse import definitions, parse
from contextls.structure.queries import SCOPES, WRAPPERS

if TYPE_CHECKING:
    import tree_sitter

_HAS_METHODS: Final = CONTAINERS - {"module", "namespace"}
_GENERICS: Final = re.compile(r"<[^<>]*>")
_SINGLE_DECLARATION: Final = frozenset(
    {"lexical_declaration", "variable_declaration", "type_declaration"}
)


def symbols(text: str, language: str) -> list[Symbol]:
    """Every definition of ``text``, in the order of the text (a holder before what it
    holds). Unsupported when ``language`` has no parser here."""
    return parsed(text, language)[0]


def parsed(text: str, language: str) -> tuple[list[Symbol], bool]:
    """``symbols``, and whether the text parsed without a syntax error (a definition
    missing from text that does not parse may only be hidden by a half-typed line)."""
    if language == "elisp":
        return elisp.symbols(text), True
    if language not in SPECS:
        raise Unsupported(f"no grammar for {language} here")
    source = text.encode()
    budget.check(source)
    tree = parse(source, language)
    return _found(tree, source, language), not tree.root_node.has_error


def _found(tree: tree_sitter.Tree, source: bytes, language: str) -> list[Symbol]:
    found: dict[tuple[int, int], tuple[int, Symbol, int, int]] = {}
    wrappers = WRAPPERS[language]
    for pattern, kind, node, name_node, receiver in definitions(tree, language, source):
        outer = _widen(node, wrappers, language)
        key = (outer.start_byte, outer.end_byte)
        if key in found and found[key][0] <= pattern:
            continue
        name = _name(name_node, language)
        if not name:
            continue
        kind = _refine(kind, node, language)
        symbol = Symbol(
            name=name.rpartition(".")[2],
            qualified=f"{_name(receiver, language)}.{name}" if receiver is not None else name,
            kind=kind,
            start_line=outer.start_point.row + 1,
            end_line=_last_row(outer) + 1,
            fold=_doc_fold(node) if kind in CONTAINERS else _fold(node, language),
            listed=kind != "impl",
            name_line=name_node.start_point.row + 1,
            body_column=_body_column(node, name_node.start_point.row, source),
        )
        found[key] = (pattern, symbol, outer.start_byte, outer.end_byte)
    return _nest(sorted(found.values(), key=lambda f: (f[2], -f[3])), SCOPES[language])


def _nest(ordered: list[tuple[int, Symbol, int, int]], scopes: frozenset[str]) -> list[Symbol]:
    """Qualified names from what holds what; occurrences counted per qualified name."""
    done: list[Symbol] = []
    stack: list[tuple[Symbol, int]] = []  # (holder, its end byte)
    seen: dict[str, int] = {}
    for _, symbol, start, end in ordered:
        while stack and stack[-1][1] <= start:
            stack.pop()
        holder = next((s for s, _ in reversed(stack) if s.kind in scopes), None)
        qualified = symbol.qualified
        kind = symbol.kind
        if holder is not None:
            qualified = f"{holder.qualified}.{qualified}"
            if kind == "function" and holder.kind in _HAS_METHODS:
                kind = "method"
        if symbol.listed:
            seen[qualified] = seen.get(qualified, 0) + 1
        symbol.qualified, symbol.kind = qualified, kind
        symbol.occurrence = seen.get(qualified, 1)
        symbol.parent = holder.qualified if holder is not None else None
        done.append(symbol)
        stack.append((symbol, end))
    return done


def _widen(node: tree_sitter.Node, wrappers: frozenset[str], language: str) -> tree_sitter.Node:
    """The node a definition really spans: with its wrappers, and a Rust item's attributes."""
    while (parent := node.parent) is not None and (
        parent.type in wrappers
        or (parent.type in _SINGLE_DECLARATION and parent.named_child_count == 1)
    ):
        if parent.type == "type_declaration" and parent.named_child_count != 1:
            break
        node = parent
    if language == "rust":
        first = node
        while (before := first.prev_named_sibling) is not None and before.type == "attribute_item":
            first = before
        if first is not node:
            return _Span(first, node)  # type: ignore[return-value]
    return node


class _Span:
    """Two sibling nodes taken as one (attributes, then the item)."""

    def __init__(self, first: tree_sitter.Node, last: tree_sitter.Node) -> None:
        self.start_byte, self.start_point = first.start_byte, first.start_point
        self.end_byte, self.end_point = last.end_byte, last.end_point
        self.parent = last.parent
        self.last = last


def _last_row(node: tree_sitter.Node) -> int:
    """The row of the last character that is not a comment trailing the body (a node
    ending at column 0 ends on the row before)."""
    if isinstance(node, _Span):
        node = node.last
    end = node.end_byte
    # Most often the leaf holding the last character is the one the descent below reaches
    # (no comment trails): found in one call rather than a call per level.
    leaf = node.descendant_for_byte_range(end - 1, end) if end > node.start_byte else None
    if (
        leaf is not None
        and leaf.end_byte == end
        and not leaf.child_count
        and leaf.type != "comment"
    ):
        node = leaf
    while node.child_count:
        last: tree_sitter.Node | None = node.child(node.child_count - 1)
        while last is not None and last.type == "comment":
            last = last.prev_sibling
        if last is None:
            break
        node = last
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point.row else row


def _name(node: tree_sitter.Node, language: str) -> str:
    """A definition's name as a person writes it: ``A.b`` for C++'s ``A::b``, no generics."""
    if node.type == "identifier":  # no space, generics, ``::`` or quotes in one
        return (node.text or b"").decode(errors="replace")
    if language in ("c", "cpp") and node.type not in _NAME_TYPES:
        node = _declared_name(node)
    text = (node.text or b"").decode(errors="replace")
    if language == "rust" or language == "cpp":
        while "<" in text and (shorter := _GENERICS.sub("", text)) != text:
            text = shorter
    if language == "rust" and node.type in ("scoped_type_identifier", "generic_type"):
        text = text.rpartition("::")[2]
    return "".join(text.split()).replace("::", ".").strip(".'\"")


_NAME_TYPES: Final = frozenset(
    {
        "identifier",
        "field_identifier",
        "type_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "namespace_identifier",
        "template_type",
        "nested_namespace_specifier",
    }
)


def _declared_name(node: tree_sitter.Node) -> tree_sitter.Node:
    """The name inside a C declarator: ``*f(int)`` names ``f``, ``&operator=(…)``
    names ``operator=``."""
    while node.type not in _NAME_TYPES:
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in node.named_children if c.type.endswith("declarator")), None)
        if inner is None:
            return node
        node = inner
    return node


def _refine(kind: str, node: tree_sitter.Node, language: str) -> str:
    if language == "go" and node.type == "type_spec":
        shape = node.child_by_field_name("type")
        if shape is not None and shape.type == "struct_type":
            return "struct"
        if shape is not None and shape.type == "interface_type":
            return "interface"
    if kind == "function" and language == "cpp" and _inside(node, "field_declaration_list"):
        return "method"
    return kind


def _inside(node: tree_sitter.Node, kind: str) -> bool:
    parent = node.parent
    while parent is not None and parent.type in ("template_declaration",):
        parent = parent.parent
    return parent is not None and parent.type == kind


def _fold(node: tree_sitter.Node, language: str) -> Fold | None:
    """The lines of a function's body that an outline hides (its docstring's first line
    and a closing bracket on a line of its own stay)."""
    body = node.child_by_field_name("body")
    if body is None and node.type == "variable_declarator":
        value = node.child_by_field_name("value")
        body = value.child_by_field_name("body") if value is not None else None
    if body is None:
        return None
    header_row = node.start_point.row
    first = body.start_point.row
    if first == header_row or body.type != "block" or language != "python":
        first += 1  # the body opens on the header's line (``{``): keep that line
    if language == "python" and (doc := _docstring(body)) is not None:
        first = max(first, doc + 1)
    last = _last_row(body)
    if language != "python" and body.end_point.column > 0:
        closing = body.end_point.row
        if last == closing and body.text is not None and body.text.rstrip()[-1:] in b"})]":
            last -= 1  # the closing bracket's line stays
    return Fold(first + 1, last + 1) if last >= first else None


def _body_column(node: tree_sitter.Node, row: int, source: bytes) -> int:
    """The column (in characters) where the body starts on the naming line; -1 if later."""
    body = node.child_by_field_name("body")
    if body is None and node.type == "variable_declarator":
        value = node.child_by_field_name("value")
        body = value.child_by_field_name("body") if value is not None else None
    if body is None or body.start_point.row != row:
        return -1
    line_start = body.start_byte - body.start_point.column
    return len(source[line_start : body.start_byte].decode(errors="replace"))


def _doc_fold(node: tree_sitter.Node) -> Fold | None:
    """A Python class's docstring past its first line (its members stay)."""
    body = node.child_by_field_name("body")
    if body is None or node.type != "class_definition":
        return None
    first = _docstring(body)
    if first is None:
        return None
    last = _last_row(body.named_child(0))
    return Fold(first + 2, last + 1) if last > first else None


def _docstring(body: tree_sitter.Node) -> int | None:
    """The row of a Python docstring's first line of words."""
    first = body.named_child(0) if body.named_child_count else None
    if first is None or first.type != "expression_statement" or not first.named_child_count:
        return None
    string = first.named_child(0)
    if string.type != "string":
        return None
    text = (string.text or b"").decode(errors="replace")
    opening = text.lstrip("rRbBuUfF")[3:] if text.lstrip("rRbBuUfF")[:3] in ('"""', "'''") else ""
    skip = 1 if opening.startswith("\n") or opening.startswith("\\\n") else 0
    return string.start_point.row + skip
