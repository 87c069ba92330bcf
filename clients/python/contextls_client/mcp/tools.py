"""The tools: what each does, how hosts may treat it, and its call to the daemon.

Every tool answers in text only (no ``structuredContent``): hosts that forward both
channels to the model would pay for each result twice. Annotations are what hosts
act on: a read-only tool runs without asking in read-only approval modes, and none
of these reaches outside the person's machine (``openWorldHint`` false).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from contextls.protocol import (
    AddFileParams,
    AddFilesParams,
    AddRegionParams,
    AddTextParams,
    FileTarget,
    ListParams,
    PinParams,
    Position,
    Range,
    RefreshParams,
    RemoveParams,
    RenderParams,
    Requests,
    RestoreParams,
    SearchParams,
    StatusParams,
)
from contextls_client.human import item_line, plural, semantic_line, window_line
from contextls_client.mcp.arguments import (
    AddFileArguments,
    AddRegionArguments,
    AddTextArguments,
    Arguments,
    GetContextArguments,
    IdsArguments,
    NoArguments,
    PinArguments,
    RefreshArguments,
    SearchArguments,
)
from contextls_client.mcp.link import DaemonLink
from contextls_client.mcp.structure_tools import (
    AddMapArguments,
    AddSymbolArguments,
    ModelArguments,
    ViewArguments,
    add_map,
    add_symbol,
    expand,
    model,
    outline,
    split_name,
)
from contextls_client.mcp.words import (
    Refusal,
    added,
    added_files,
    cut,
    evicted_lines,
    item_entry,
    named,
)

GLOB_CHARACTERS: Final = frozenset("*?[")
EMPTY_WINDOW: Final = "(the context window is empty)"


@dataclass(frozen=True)
class Hints:
    read_only: bool
    destructive: bool = False
    idempotent: bool = True


READS: Final = Hints(read_only=True)
CHANGES: Final = Hints(read_only=False)


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    arguments: type[Arguments]
    hints: Hints
    run: Callable[[DaemonLink, Any], Awaitable[str]]


def workspace_file(link: DaemonLink, path: str) -> Path:
    """A path the agent gave, inside the workspace (refused in words otherwise)."""
    root = link.root
    assert root is not None
    if "\x00" in path:
        raise Refusal("the path holds a NUL character; give the path as plain text")
    try:
        given = Path(path).expanduser()
        absolute = (given if given.is_absolute() else root / given).resolve()
        absolute.exists()  # a name the system refuses (too long, say) is refused here
    except (OSError, RuntimeError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise Refusal(f"{cut(path)} cannot be used as a path: {cut(str(reason))}") from None
    if not absolute.is_relative_to(root):
        raise Refusal(f"{cut(path)} is outside the workspace {root}")
    return absolute


async def get_context(link: DaemonLink, args: GetContextArguments) -> str:
    rendered = await link.call(
        Requests.RENDER,
        RenderParams(
            workspace=link.workspace,
            format=args.format,
            max_tokens=args.max_tokens,
            query=args.query,
            auto_retrieve=args.auto_retrieve,
        ),
    )
    if not (rendered.item_ids or rendered.history_ids or rendered.omitted_ids):
        return EMPTY_WINDOW
    notes = [f"warning: {warning}" for warning in rendered.warnings]
    if rendered.omitted_ids:
        notes.append(
            f"left out (over {rendered.budget or args.max_tokens} tokens): "
            f"{', '.join(rendered.omitted_ids)}; list shows them, a larger max_tokens renders them"
        )
    text: str = rendered.text
    return "\n\n".join([text.rstrip("\n"), "\n".join(notes)]) if notes else text


async def list_items(link: DaemonLink, _: NoArguments) -> str:
    listed = await link.call(Requests.LIST, ListParams(workspace=link.workspace))
    status = await link.call(Requests.STATUS, StatusParams(workspace=link.workspace))
    if not listed.items:
        return f"{EMPTY_WINDOW}\n{window_line(status)}"
    return "\n".join([*(item_entry(item) for item in listed.items), window_line(status)])


async def add_file(link: DaemonLink, args: AddFileArguments) -> str:
    if GLOB_CHARACTERS & set(args.path):
        return await _add_many(link, args, FileTarget(glob=_glob(link, args.path)))
    absolute = workspace_file(link, args.path)
    if absolute.is_dir():
        return await _add_many(link, args, FileTarget(uri=absolute.as_uri()))
    result = await link.call(
        Requests.ADD_FILE,
        AddFileParams(workspace=link.workspace, uri=absolute.as_uri(), pin=args.pin),
    )
    return added(result)


def _glob(link: DaemonLink, pattern: str) -> str:
    """A glob kept inside the workspace: relative (without ``..``) or absolute under it."""
    if "\x00" in pattern:
        raise Refusal("the pattern holds a NUL character; give it as plain text")
    root = link.root
    assert root is not None
    given = Path(pattern)
    inside = given.is_relative_to(root) if given.is_absolute() else ".." not in given.parts
    if not inside:
        raise Refusal(f"{cut(pattern)} reaches outside the workspace {root}")
    return pattern


async def _add_many(link: DaemonLink, args: AddFileArguments, target: FileTarget) -> str:
    result = await link.call(
        Requests.ADD_FILES,
        AddFilesParams(workspace=link.workspace, targets=[target], pin=args.pin, force=args.force),
    )
    return added_files(result)


async def add_region(link: DaemonLink, args: AddRegionArguments) -> str:
    if args.start_line < 1 or args.end_line < args.start_line:
        raise Refusal("lines are 1-based, and end_line cannot come before start_line")
    span = Range(
        start=Position(line=args.start_line - 1, character=0),
        end=Position(line=args.end_line, character=0),
    )
    uri = workspace_file(link, args.path).as_uri()
    result = await link.call(
        Requests.ADD_REGION,
        AddRegionParams(workspace=link.workspace, uri=uri, range=span, pin=args.pin),
    )
    return added(result)


async def add_definition(link: DaemonLink, args: AddSymbolArguments) -> str:
    path, name = split_name(args)
    return await add_symbol(link, args, name, workspace_file(link, path) if path else None)


async def add_text(link: DaemonLink, args: AddTextArguments) -> str:
    result = await link.call(
        Requests.ADD_TEXT,
        AddTextParams(workspace=link.workspace, content=args.content, kind=args.kind, pin=args.pin),
    )
    return added(result)


async def search_archive(link: DaemonLink, args: SearchArguments) -> str:
    result = await link.call(
        Requests.SEARCH,
        SearchParams(workspace=link.workspace, query=args.query, limit=args.limit, mode=args.mode),
    )
    lines = [f"{plural(len(result.hits), 'hit')} ({result.mode} search)"]
    if result.warning:
        lines.append(f"warning: {result.warning}")
    for hit in result.hits:
        found_by = "+".join(hit.modes) or result.mode
        lines.append(f"{item_line(hit.item)}, score {hit.score:.2f}, found by {found_by}:")
        lines.append(f"  {' '.join(hit.snippet.split())}")
    if result.hits:
        lines.append("(restore brings a hit back into the window)")
    return "\n".join(lines)


async def restore(link: DaemonLink, args: IdsArguments) -> str:
    result = await link.call(
        Requests.RESTORE, RestoreParams(workspace=link.workspace, ids=args.ids)
    )
    lines = named(result.items, "restored")
    lines += [f"{i} was already in the window" for i in result.already_in_window]
    lines += [f"{asked} is now part of {into}" for asked, into in result.merged.items()]
    lines += evicted_lines(result.evicted)
    lines.append(window_line(result.status))
    return "\n".join(lines)


async def pin(link: DaemonLink, args: PinArguments) -> str:
    result = await link.call(
        Requests.PIN, PinParams(workspace=link.workspace, id=args.id, pin=args.pinned)
    )
    done = "pinned" if result.item.pinned else "unpinned"
    return f"{done} {item_entry(result.item)}\n{window_line(result.status)}"


async def remove(link: DaemonLink, args: IdsArguments) -> str:
    result = await link.call(Requests.REMOVE, RemoveParams(workspace=link.workspace, ids=args.ids))
    return (
        f"removed {', '.join(result.removed)} to the archive (restore brings them back)\n"
        f"{window_line(result.status)}"
    )


async def refresh(link: DaemonLink, args: RefreshArguments) -> str:
    result = await link.call(
        Requests.REFRESH, RefreshParams(workspace=link.workspace, ids=args.ids)
    )
    lines = named(result.refreshed, "read again:") or ["nothing was stale"]
    lines += evicted_lines(result.evicted)
    lines.append(window_line(result.status))
    return "\n".join(lines)


async def status(link: DaemonLink, _: NoArguments) -> str:
    result = await link.call(Requests.STATUS, StatusParams(workspace=link.workspace))
    info = link.info
    budget = result.budget or result.max_tokens
    lines = [
        f"workspace: {link.root}",
        f"database: {info.storage if info else '?'}"
        + (f" (daemon pid {info.pid}, contextls {info.version})" if info else ""),
        f"tokens: {result.tokens:,} of {budget:,} ({result.budget_policy} budget"
        + (f", task {result.task}" if result.budget_policy == "adaptive" else "")
        + ")",
        f"items: {result.item_count} of {result.max_items} ({result.pinned_count} pinned, "
        f"{result.stale_count} stale)",
        f"archive: {plural(result.archived_count, 'item')}",
    ]
    if result.next_eviction is not None:
        lines.append(f"evicted next: {item_entry(result.next_eviction)}")
    if result.semantic is not None:
        lines.append(f"search: {semantic_line(result.semantic)}")
    return "\n".join(lines)


TOOLS: Final = (
    Tool(
        "get_context",
        "Read the context",
        "The workspace's context as it should be read: every item of the window (files, "
        "regions, errors, notes) with its id and pinned/stale flags, newest last. Read it "
        "before answering questions about this workspace; with query, the archived items "
        "relevant to it are added.",
        GetContextArguments,
        READS,
        get_context,
    ),
    Tool(
        "list",
        "List the items",
        "One line per item of the window: id, kind, label, tokens, pinned/stale. Use the "
        "ids with pin, remove and refresh.",
        NoArguments,
        READS,
        list_items,
    ),
    Tool(
        "add_file",
        "Add files",
        "Add a file, a folder or a glob of the workspace to the context. A file follows "
        "later edits. When the window is full, the oldest unpinned items go to the "
        "archive; a folder or glob that would evict more than half of the window is "
        "refused until force=true.",
        AddFileArguments,
        CHANGES,
        add_file,
    ),
    Tool(
        "add_region",
        "Add lines of a file",
        "Add some lines of a workspace file to the context (the function or passage that "
        "matters, rather than the whole file).",
        AddRegionArguments,
        CHANGES,
        add_region,
    ),
    Tool(
        "add_symbol",
        "Add a definition by name",
        "Add a function, method or class of the workspace by its name (Parser.parse, or "
        "parse to search every file). It follows the definition when the file changes; a "
        "name that fits several definitions is refused with the list.",
        AddSymbolArguments,
        CHANGES,
        add_definition,
    ),
    Tool(
        "add_map",
        "Add a map of the repository",
        "Add a map of the workspace's definitions (signatures, no bodies), ranked by how "
        "much the code uses them and toward what the context already holds and the query; "
        "it fits its token share and is ranked again as the context changes.",
        AddMapArguments,
        CHANGES,
        add_map,
    ),
    Tool(
        "expand",
        "Show items whole",
        "Show items that are outlines (signatures without bodies, as the window shrinks "
        "files when it needs room, or as they were added) whole again.",
        ViewArguments,
        CHANGES,
        expand,
    ),
    Tool(
        "outline",
        "Show items as outlines",
        "Show files (and classes added by name) as their outlines: signatures and the "
        "first line of each docstring, without bodies; expand shows them whole again.",
        ViewArguments,
        CHANGES,
        outline,
    ),
    Tool(
        "model",
        "The window's model",
        "Read or set the model the window is for: its budget and every count are in that "
        "model's tokens, for every client of this workspace.",
        ModelArguments,
        Hints(read_only=False, idempotent=True),
        model,
    ),
    Tool(
        "add_text",
        "Add a note",
        "Add a piece of text to the context: a note, a decision, an error message, a "
        "shell transcript, or code that is in no file.",
        AddTextArguments,
        CHANGES,
        add_text,
    ),
    Tool(
        "search_archive",
        "Search the archive",
        "Search the items that left the window (evicted, removed). Each hit has an id to "
        "restore and says which search found it.",
        SearchArguments,
        READS,
        search_archive,
    ),
    Tool(
        "restore",
        "Restore archived items",
        "Bring archived items back into the window (ids from search_archive).",
        IdsArguments,
        CHANGES,
        restore,
    ),
    Tool(
        "pin",
        "Pin or unpin an item",
        "Pin an item so it is never evicted, or unpin it (pinned=false).",
        PinArguments,
        CHANGES,
        pin,
    ),
    Tool(
        "remove",
        "Remove items",
        "Take items out of the window, to the archive (restore brings them back). The "
        "person may have added them: remove only what is no longer relevant.",
        IdsArguments,
        Hints(read_only=False, destructive=True),
        remove,
    ),
    Tool(
        "refresh",
        "Refresh stale items",
        "Read items again from their files: regions whose file changed are stale until refreshed.",
        RefreshArguments,
        CHANGES,
        refresh,
    ),
    Tool(
        "status",
        "Window status",
        "How full the window is (tokens and items against their limits), what is evicted "
        "next, and which workspace and database this server serves.",
        NoArguments,
        READS,
        status,
    ),
)
TOOLS_BY_NAME: Final = {tool.name: tool for tool in TOOLS}
