"""Generate ``clients/python/contextls_client/wire_types.py``: the results the CLI's quick
path reads, as plain classes built from decoded JSON (standard library only, no msgspec).

    python -m contextls.protocol.schema            # writes it, with the schema
    python -m contextls.protocol.schema --check    # fails when it is stale

Each class has the protocol Struct's fields under the same (snake_case) names, so the
words the CLI prints are written once for both. Only what ``ROOTS`` reach is mirrored.
"""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any, Final

import msgspec

from contextls import protocol

CLIENTS: Final = Path(__file__).resolve().parents[3] / "clients" / "python"
MIRROR_PATH: Final = CLIENTS / "contextls_client" / "wire_types.py"
ROOTS: Final = (
    protocol.Requests.SERVER_INFO.result,
    protocol.Requests.STATUS.result,
    protocol.Requests.LIST.result,
    protocol.Requests.RENDER.result,
    protocol.Requests.ADD_FILES.result,
)
"""The answers the quick path decodes (``contextls_client.quick``)."""

HEADER: Final = '''# ruff: noqa: E501
"""The results the CLI's quick path reads, as plain classes (standard library only).

Generated from server/contextls/protocol/ by ``python -m contextls.protocol.schema``; do
not edit by hand (``--check`` fails when it is stale).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _each(kind: Any, values: list[Any]) -> list[Any]:
    return [kind(value) for value in values]


def _maybe(kind: Any, value: Any) -> Any:
    return None if value is None else kind(value)
'''


def _structs() -> list[type[msgspec.Struct]]:
    """Every Struct the roots reach, each after the ones it holds."""
    ordered: list[type[msgspec.Struct]] = []

    def visit(kind: Any) -> None:
        if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
            if kind in ordered:
                return
            for field in msgspec.structs.fields(kind):
                visit(field.type)
            ordered.append(kind)
            return
        for argument in typing.get_args(kind):
            visit(argument)

    for root in ROOTS:
        visit(root)
    return ordered


def _annotation(kind: Any) -> str:
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        return kind.__name__
    origin = typing.get_origin(kind)
    if origin is typing.Annotated:
        return _annotation(typing.get_args(kind)[0])
    if origin is typing.Literal:
        return "str" if all(isinstance(a, str) for a in typing.get_args(kind)) else "Any"
    if origin in (types.UnionType, typing.Union):
        return " | ".join(_annotation(a) for a in typing.get_args(kind))
    if origin is list:
        return f"list[{_annotation(typing.get_args(kind)[0])}]"
    if origin is dict:
        key, value = typing.get_args(kind)
        return f"dict[{_annotation(key)}, {_annotation(value)}]"
    if kind is type(None):
        return "None"
    if kind in (int, str, bool, float):
        return str(kind.__name__)
    return "Any"


def _struct_of(kind: Any) -> tuple[str, str] | None:
    """How a field's JSON becomes its value: ``("each", Name)``, ``("maybe", Name)``,
    ``("one", Name)``, or None (taken as it is)."""
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        return "one", kind.__name__
    origin = typing.get_origin(kind)
    arguments = typing.get_args(kind)
    if origin is typing.Annotated:
        return _struct_of(arguments[0])
    if origin is list:
        inner = _struct_of(arguments[0])
        return ("each", inner[1]) if inner is not None and inner[0] == "one" else None
    if origin in (types.UnionType, typing.Union):
        structs = [a for a in arguments if a is not type(None)]
        if len(structs) == 1 and type(None) in arguments:
            inner = _struct_of(structs[0])
            if inner is not None and inner[0] == "one":
                return "maybe", inner[1]
    return None


def _read(field: msgspec.structs.FieldInfo) -> str:
    key = repr(field.encode_name)
    if field.required:
        return f"wire[{key}]"
    if field.default_factory is not msgspec.NODEFAULT:
        return f"wire.get({key}, {field.default_factory()!r})"
    return f"wire.get({key})" if field.default is None else f"wire.get({key}, {field.default!r})"


def _class(struct: type[msgspec.Struct]) -> str:
    fields = msgspec.structs.fields(struct)
    doc = (struct.__doc__ or "").strip().splitlines()
    lines = [f"class {struct.__name__}:"]
    if doc and not doc[0].startswith(struct.__name__ + "("):
        lines.append(f'    """{doc[0]}"""')
        lines.append("")
    names = ", ".join(sorted(repr(field.name) for field in fields))
    lines.append(f"    __slots__ = ({names}{',' if len(fields) == 1 else ''})")
    lines.append("")
    lines.append("    def __init__(self, wire: dict[str, Any]) -> None:")
    for field in fields:
        read = _read(field)
        how = _struct_of(field.type)
        if how is None:
            value = read
        elif how[0] == "each":
            value = f"_each({how[1]}, {read})"
        elif how[0] == "maybe":
            value = f"_maybe({how[1]}, {read})"
        else:
            value = f"{how[1]}({read})"
        lines.append(f"        self.{field.name}: {_annotation(field.type)} = {value}")
    return "\n".join(lines)


def render() -> str:
    classes = "\n\n\n".join(_class(struct) for struct in _structs())
    return f"{HEADER}\n\n{classes}\n"
