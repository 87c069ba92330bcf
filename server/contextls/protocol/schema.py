"""Generate ``clients/protocol/contextls.schema.json`` from the protocol package, and the
Python mirror the CLI's quick path reads (``python_mirror``).

    python -m contextls.protocol.schema            # write the files
    python -m contextls.protocol.schema --check    # exit 1 if a file is stale

The schema lists every request (params and result) and notification under
``x-methods`` / ``x-notifications`` so editor clients can be checked against it.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path
from typing import Any

import msgspec

from contextls import protocol
from contextls.protocol import python_mirror

SCHEMA_PATH = Path(__file__).resolve().parents[3] / "clients" / "protocol" / "contextls.schema.json"


def build() -> dict[str, Any]:
    types: list[Any] = []
    for params, result in protocol.METHODS.values():
        types.extend([params, result])
    types.extend(protocol.NOTIFICATIONS.values())
    types.append(protocol.Settings)
    for data in protocol.ERROR_DATA.values():
        types.extend(data if isinstance(data, tuple) else [data])
    (schemas, components) = msgspec.json.schema_components(types, ref_template="#/$defs/{name}")
    schemas, components = _cleaned(schemas), _cleaned(components)
    by_type = dict(zip(types, schemas, strict=True))

    def data_schema(data: Any) -> Any:
        if isinstance(data, tuple):
            return {"anyOf": [by_type[each] for each in data]}
        return by_type[data]

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "contextls.schema.json",
        "title": "contextls protocol",
        "description": "Generated from server/contextls/protocol/; do not edit by hand.",
        "x-methods": {
            method: {"params": by_type[params], "result": by_type[result]}
            for method, (params, result) in protocol.METHODS.items()
        },
        "x-notifications": {
            method: {"params": by_type[params]} for method, params in protocol.NOTIFICATIONS.items()
        },
        "x-settings": by_type[protocol.Settings],
        "x-errorCodes": {code.name: int(code) for code in protocol.ErrorCode},
        "x-errorData": {code.name: data_schema(data) for code, data in protocol.ERROR_DATA.items()},
        "$defs": components,
    }


def _cleaned(schema: Any) -> Any:
    """``schema`` with each description's indentation taken out, as ``inspect.cleandoc``
    does: msgspec 0.23 cleans docstrings so, earlier versions do not, and the file must
    not depend on which one is installed."""
    if isinstance(schema, dict):
        return {
            key: inspect.cleandoc(value)
            if key == "description" and isinstance(value, str)
            else _cleaned(value)
            for key, value in schema.items()
        }
    if isinstance(schema, list | tuple):
        return type(schema)(_cleaned(value) for value in schema)
    return schema


def render() -> str:
    return msgspec.json.format(msgspec.json.encode(build()).decode(), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the file is stale")
    parser.add_argument("--output", type=Path, default=SCHEMA_PATH)
    parser.add_argument("--mirror", type=Path, default=python_mirror.MIRROR_PATH)
    args = parser.parse_args(argv)
    wanted = {args.output: render(), args.mirror: python_mirror.render()}
    if args.check:
        stale = [
            path
            for path, text in wanted.items()
            if (path.read_text() if path.exists() else "") != text
        ]
        for path in stale:
            print(f"{path} is stale: run `python -m contextls.protocol.schema`", file=sys.stderr)
        return 1 if stale else 0
    for path, text in wanted.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
