"""The tools that use the code's structure: a definition by its name (the server
parses the file; an agent names code as a person does, ``Parser.parse``), the ranked
map of the repository, and how an item is shown (whole, or its outline); and the model
the window counts in."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from contextls.protocol import (
    AddMapParams,
    AddNamedSymbolParams,
    ConfigureParams,
    Requests,
    SetViewParams,
    StatusParams,
    WindowSettingsChange,
)
from contextls_client.human import window_line
from contextls_client.mcp.arguments import PATH, PIN, Arguments
from contextls_client.mcp.link import DaemonLink
from contextls_client.mcp.words import added, evicted_lines, item_entry


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
    replaced = "".join(
        f"\nit replaces the map {old}, now in the archive (restore brings it back)"
        for old in result.replaced
    )
    return added(result) + replaced + "\n\n" + result.item.content


class ViewArguments(Arguments):
    ids: list[str] = Field(
        min_length=1,
        max_length=1000,
        description="Item ids such as ctx-12 (from list or get_context).",
    )


async def set_view(link: DaemonLink, ids: list[str], view: Literal["whole", "outline"]) -> str:
    """Show items whole again, or as their outlines (signatures without bodies)."""
    result = await link.call(
        Requests.SET_VIEW, SetViewParams(workspace=link.workspace, ids=ids, view=view)
    )
    shown = "whole" if view == "whole" else "as its outline"
    lines = [f"showing {item_entry(item)} {shown}" for item in result.items]
    if not lines:
        lines = [f"nothing changed: {', '.join(ids)} already shown {shown}"]
    return "\n".join([*lines, *evicted_lines(result.evicted), window_line(result.status)])


async def expand(link: DaemonLink, args: ViewArguments) -> str:
    return await set_view(link, args.ids, "whole")


async def outline(link: DaemonLink, args: ViewArguments) -> str:
    return await set_view(link, args.ids, "outline")


class ModelArguments(Arguments):
    model: str | None = Field(
        None,
        min_length=1,
        max_length=100,
        description="The model whose tokens the window's budget and counts are in: "
        "gpt-4o, gpt-4, claude-opus-4.6, claude-opus-4.7, gemini-2.5 … Leave it out to "
        "read the model the window is for.",
    )
    force: bool = Field(
        False,
        description="Set it even when counting in the new model's tokens evicts more than "
        "half of the window. Ask the person first (default false).",
    )


async def model(link: DaemonLink, args: ModelArguments) -> str:
    """The window's model, read or set (every client sees it: it is kept with the window)."""
    if args.model is None:
        status = await link.call(Requests.STATUS, StatusParams(workspace=link.workspace))
        return (
            f"the window counts in {status.model or status.encoding} tokens "
            f"({status.encoding}, {status.count_label})\n{window_line(status)}"
        )
    result = await link.call(
        Requests.CONFIGURE,
        ConfigureParams(
            workspace=link.workspace,
            settings=WindowSettingsChange(model=args.model),
            force=args.force,
        ),
    )
    status = result.status
    said = (
        f"the window now counts in {status.model} tokens ({status.encoding}, {status.count_label})"
        if "model" in result.changed
        else f"the window counts in {status.model} tokens already"
    )
    return "\n".join([said, *evicted_lines(result.evicted), window_line(status)])
