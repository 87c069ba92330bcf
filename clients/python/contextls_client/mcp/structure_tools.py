"""The tools that use the code's structure: a definition by its name (the server
parses the file; an agent names code as a person does, ``Parser.parse``), and the
ranked map of the repository."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from contextls.protocol import AddMapParams, AddNamedSymbolParams, Requests
from contextls_client.mcp.arguments import PATH, PIN, Arguments
from contextls_client.mcp.link import DaemonLink
from contextls_client.mcp.words import added


class AddSymbolArguments(Arguments):
    name: str = Field(
        min_length=1,
        max_length=1000,
        description="The definition's name: qualified (Parser.parse, Parser; C++'s "
        "A::b too) or its last part (parse). 'FILE::NAME' names the file too; "
        "'name@2' is the second definition of that name in its file (overloads).",
    )
    path: str | None = Field(
        None, description=f"The file to look in; without it, every file. {PATH}"
    )
    outline: bool = Field(
        False,
        description="Add a class (or other container) as its outline: signatures and "
        "the first line of each docstring, without bodies (default false).",
    )
    pin: bool = Field(False, description=PIN)


def split_name(args: AddSymbolArguments) -> tuple[str | None, str]:
    """(the file, the name): ``src/app.py::Parser.parse`` names both (a C++ ``A::b``,
    whose part before ``::`` is no file name, stays a name)."""
    if args.path is None and "::" in args.name:
        head, _, rest = args.name.partition("::")
        if "." in head or "/" in head:
            return head, rest
    return args.path, args.name


async def add_symbol(
    link: DaemonLink, args: AddSymbolArguments, name: str, file: Path | None
) -> str:
    result = await link.call(
        Requests.ADD_NAMED_SYMBOL,
        AddNamedSymbolParams(
            workspace=link.workspace,
            name=name,
            uri=file.as_uri() if file is not None else None,
            outline=args.outline,
            pin=args.pin,
        ),
    )
    return added(result)


class AddMapArguments(Arguments):
    query: str | None = Field(
        None,
        max_length=1000,
        description="Words for what you are looking for; definitions they name rank first.",
    )
    tokens: int | None = Field(
        None,
        ge=64,
        le=1_000_000,
        description="The most tokens the map may take (default: the window's mapTokens, "
        "1,024 unless set); it never takes more.",
    )


async def add_map(link: DaemonLink, args: AddMapArguments) -> str:
    result = await link.call(
        Requests.ADD_MAP,
        AddMapParams(workspace=link.workspace, query=args.query, tokens=args.tokens),
    )
    return added(result) + "\n\n" + result.item.content
