"""Where each language defines things, as tree-sitter queries.

A pattern captures the definition as ``@def.KIND`` and its name as ``@name`` (a Go
method also its receiver's type as ``@receiver``). A node that two patterns match
keeps the first. Ranges are widened where the language puts part of a definition
outside its node (``contextls.structure.symbols``): Python's decorators, C++'s
``template <…>``, Rust's ``#[attributes]``, ``export``, and a declaration of one
variable holding a function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

_PYTHON = """
(function_definition name: (identifier) @name) @def.function
(class_definition name: (identifier) @name) @def.class
"""

_JAVASCRIPT = """
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(class_declaration name: (_) @name) @def.class
(method_definition name: (_) @name) @def.method
(variable_declarator name: (identifier) @name value: (class)) @def.class
(variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @def.function
"""

_TYPESCRIPT = (
    _JAVASCRIPT
    + """
(abstract_class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(type_alias_declaration name: (_) @name) @def.type
(enum_declaration name: (_) @name) @def.enum
(internal_module name: (_) @name) @def.module
(module name: (_) @name) @def.module
(method_signature name: (_) @name) @def.method
(abstract_method_signature name: (_) @name) @def.method
(function_signature name: (_) @name) @def.function
"""
)

_GO = """
(function_declaration name: (identifier) @name) @def.function
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [(type_identifier) @receiver
             (pointer_type (type_identifier) @receiver)
             (generic_type type: (type_identifier) @receiver)
             (pointer_type (generic_type type: (type_identifier) @receiver))]))
  name: (field_identifier) @name) @def.method
(type_spec name: (type_identifier) @name) @def.type
(type_alias name: (type_identifier) @name) @def.type
(method_elem name: (field_identifier) @name) @def.method
"""

_RUST = """
(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.struct
(union_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(trait_item name: (type_identifier) @name) @def.trait
(type_item name: (type_identifier) @name) @def.type
(mod_item name: (identifier) @name) @def.module
(macro_definition name: (identifier) @name) @def.macro
(const_item name: (identifier) @name) @def.constant
(static_item name: (identifier) @name) @def.constant
(impl_item type: (_) @name) @def.impl
"""

_JAVA = """
(class_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(record_declaration name: (identifier) @name) @def.class
(annotation_type_declaration name: (identifier) @name) @def.interface
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.constructor
"""

_C = """
(function_definition declarator: (_) @name) @def.function
(struct_specifier name: (type_identifier) @name body: (_)) @def.struct
(union_specifier name: (type_identifier) @name body: (_)) @def.struct
(enum_specifier name: (type_identifier) @name body: (_)) @def.enum
(type_definition declarator: (type_identifier) @name) @def.type
(preproc_function_def name: (identifier) @name) @def.macro
"""

_CPP = (
    _C
    + """
(class_specifier name: (_) @name body: (_)) @def.class
(struct_specifier name: (_) @name body: (_)) @def.struct
(namespace_definition name: (_) @name) @def.namespace
(alias_declaration name: (type_identifier) @name) @def.type
(concept_definition name: (identifier) @name) @def.type
"""
)

DEFINITIONS: Final[dict[str, str]] = {
    "python": _PYTHON,
    "javascript": _JAVASCRIPT,
    "typescript": _TYPESCRIPT,
    "tsx": _TYPESCRIPT,
    "go": _GO,
    "rust": _RUST,
    "java": _JAVA,
    "c": _C,
    "cpp": _CPP,
}


@dataclass(frozen=True, slots=True)
class Statements:
    """Where a language whose definitions are statements has them: each definition's node
    type with its capture (the patterns of ``DEFINITIONS``, in their order), and the nodes
    that may hold a statement (compound statements, their clauses, blocks)."""

    definitions: dict[str, str]
    holders: frozenset[str]
    keywords: tuple[bytes, ...]
    """The text of every definition holds one of these (a holder without any holds none)."""


STATEMENTS: Final[dict[str, Statements]] = {
    "python": Statements(
        {"function_definition": "def.function", "class_definition": "def.class"},
        frozenset(
            {
                "module",
                "block",
                "decorated_definition",
                "function_definition",
                "class_definition",
                "if_statement",
                "elif_clause",
                "else_clause",
                "for_statement",
                "while_statement",
                "try_statement",
                "except_clause",
                "finally_clause",
                "with_statement",
                "match_statement",
                "case_clause",
            }
        ),
        (b"def", b"class"),
    ),
}
"""In a tree without a syntax error these languages' definitions are found by walking the
holders alone: the query visits every node of every expression (CPython's ``Lib/``:
1.1 s against 0.5 s), and a grammar puts a definition nowhere else (the walk and the query
are compared over the standard library in the tests)."""


SCOPES: Final[dict[str, frozenset[str]]] = {
    "python": frozenset({"function", "method", "class"}),
    "javascript": frozenset({"function", "class", "method"}),
    "typescript": frozenset({"function", "class", "method", "interface", "module"}),
    "tsx": frozenset({"function", "class", "method", "interface", "module"}),
    "go": frozenset({"type", "struct", "interface"}),
    "rust": frozenset({"impl", "trait", "module"}),
    "java": frozenset({"class", "interface", "enum", "method", "constructor"}),
    "c": frozenset(),
    "cpp": frozenset({"class", "struct", "namespace"}),
}
"""The kinds whose names prefix the names of definitions inside them (``Parser.parse``);
C's struct tags are global, so nothing in C nests."""

WRAPPERS: Final[dict[str, frozenset[str]]] = {
    "python": frozenset({"decorated_definition"}),
    "javascript": frozenset({"export_statement"}),
    "typescript": frozenset({"export_statement", "ambient_declaration"}),
    "tsx": frozenset({"export_statement", "ambient_declaration"}),
    "go": frozenset({"type_declaration"}),
    "rust": frozenset(),
    "java": frozenset(),
    "c": frozenset(),
    "cpp": frozenset({"template_declaration"}),
}
"""Parents that belong to the definition they hold alone (``@decorator`` lines,
``export``, ``template <…>``, Go's ``type`` keyword)."""
