"""``contextls mcp``: the workspace's context for LLM agents, over the Model Context Protocol.

An MCP server over stdio (the official ``mcp`` SDK, the optional extra
``contextls[mcp]``) that is a client of the user's shared daemon: one LSP
session on its socket, for the workspace of its working directory (or
``--workspace``), like the CLI. What an agent adds lands in the window the
editors and the CLI see, and every change to that window, from anywhere,
reaches the agent as ``notifications/resources/updated`` for the context
resource (the daemon pushes ``contextls/didChangeStatus``; it is turned into
a resource event).

The tools' parameter types come from ``protocol.py`` where they overlap
(item kinds, render formats). Refusals come back as tool errors carrying the
server's message. Paths are confined to the workspace, and files that
usually hold secrets are refused, as in the CLI's directory expansion.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp_types import Resource

from contextls import __version__
from contextls.core.secrets import is_secret_path
from contextls.protocol import (
    AddFileParams,
    AddRegionParams,
    AddResult,
    AddTextParams,
    ItemKind,
    ListParams,
    Notification,
    PinParams,
    Position,
    Range,
    RemoveParams,
    RenderFormat,
    RenderParams,
    Request,
    Requests,
    RestoreParams,
    SearchMode,
    SearchParams,
    StatusParams,
    Wire,
)
from contextls_client.daemon import connect_or_start, daemon_socket
from contextls_client.lsp_client import ContextlsClient, ReceivedNotification
from contextls_client.messages import ContextlsError, ServerGoneError
from contextls_client.session import Place

CONTEXT_SCHEME: Final = "contextls"

INSTRUCTIONS: Final = """\
contextls keeps the context of this workspace: the files, regions, errors and notes the
person (in their editor or shell) or you marked as relevant, within a token budget. Read it
with get_context (or the context resource) before answering questions about this code;
add what you find relevant with add_file, add_region or add_text; things that fell out of
the window are in the archive (search_archive, then restore). The person sees every change
in their editor's status bar."""


class Connection:
    """The MCP server's one session on the daemon, for one workspace."""

    def __init__(self, place: Place) -> None:
        self.place = place
        self.client: ContextlsClient | None = None
        self.context_uri = f"{CONTEXT_SCHEME}://context/{place.root.name or 'workspace'}"

    @property
    def workspace(self) -> str:
        return self.place.root_uri

    async def open(self, bus: InMemorySubscriptionBus) -> None:
        socket = connect_or_start(self.place.storage)
        socket.close()  # asyncio's connection is made afresh; the daemon now runs
        client = ContextlsClient(socket=daemon_socket(self.place.storage))
        await client.start()
        options = {"storage": self.place.storage} if self.place.storage else {}
        await client.initialize(self.place.root, options)
        loop = asyncio.get_running_loop()
        pending: set[asyncio.Task[None]] = set()

        async def changed() -> None:
            await bus.publish(ResourceUpdated(uri=self.context_uri))
            await bus.publish(ResourcesListChanged())  # the items are resources too

        def on_notification(note: ReceivedNotification) -> None:
            if note.method == Notification.DID_CHANGE_STATUS:
                task = loop.create_task(changed())
                pending.add(task)
                task.add_done_callback(pending.discard)

        client.on_notification(on_notification)
        self.client = client

    async def close(self) -> None:
        if self.client is not None:
            with contextlib.suppress(ServerGoneError, ContextlsError, OSError):
                await self.client.shutdown()

    async def call(self, request: Request[Any, Any], params: Wire) -> Any:
        """One request; a refusal becomes a tool error with the server's message."""
        if self.client is None:
            raise ToolError("contextls is not connected to its daemon yet")
        try:
            return await self.client.call(request, params)
        except ContextlsError as error:
            raise ToolError(error.message) from error
        except ServerGoneError as error:
            raise ToolError(f"the contextls daemon went away: {error.reason}") from error

    def file_uri(self, path: str) -> str:
        """A path an agent gave, as a URI inside the workspace (refused otherwise)."""
        given = Path(path).expanduser()
        absolute = (given if given.is_absolute() else self.place.root / given).resolve()
        if not absolute.is_relative_to(self.place.root):
            raise ToolError(f"{path} is outside the workspace {self.place.root}")
        if is_secret_path(absolute):
            raise ToolError(
                f"{path} looks like a file that holds secrets (keys, tokens, passwords); "
                "it is not added through MCP. The person can add it by name with "
                "`contextls add` if they mean to"
            )
        return absolute.as_uri()


class ContextMCPServer(MCPServer[None]):
    """Lists every item of the window as a resource, besides the registered ones."""

    def __init__(self, connection: Connection, **options: Any) -> None:
        super().__init__(**options)
        self._connection = connection

    async def list_resources(self) -> list[Resource]:
        listed = await super().list_resources()
        client = self._connection.client
        if client is None:
            return listed
        try:
            items = (
                await client.call(Requests.LIST, ListParams(workspace=self._connection.workspace))
            ).items
        except (ContextlsError, ServerGoneError):
            return listed
        return [
            *listed,
            *(
                Resource(
                    uri=f"{CONTEXT_SCHEME}://item/{item.id}",
                    name=item.id,
                    title=item.label,
                    description=f"{item.kind}, {item.tokens} tokens"
                    + (", pinned" if item.pinned else "")
                    + (", stale" if item.stale else ""),
                    mime_type="text/plain",
                )
                for item in items
            ),
        ]


def build(place: Place) -> MCPServer:
    """The MCP server of ``place``'s workspace."""
    connection = Connection(place)
    bus = InMemorySubscriptionBus()

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        await connection.open(bus)
        try:
            yield None
        finally:
            await connection.close()

    server = ContextMCPServer(
        connection,
        name="contextls",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",  # a refusal is the agent's to read, not a log line
        subscriptions=bus,
        lifespan=lifespan,
    )
    _tools(server, connection)
    _resources(server, connection)
    return server


def _added(result: AddResult) -> str:
    lines = [f"added {result.item.id} ({result.item.label}, {result.item.tokens} tokens)"]
    if result.merged:
        lines.append(f"it absorbed {', '.join(result.merged)}")
    if result.evicted:
        lines.append(
            "evicted to the archive: " + ", ".join(f"{i.id} ({i.label})" for i in result.evicted)
        )
    lines.extend(f"warning: {warning}" for warning in result.warnings)
    status = result.status
    lines.append(f"window: {status.tokens}/{status.max_tokens} tokens, {status.item_count} items")
    return "\n".join(lines)


def _tools(server: MCPServer, connection: Connection) -> None:
    @server.tool()
    async def get_context(
        format: RenderFormat = "markdown",
        max_tokens: int | None = None,
        query: str | None = None,
        auto_retrieve: bool = False,
    ) -> str:
        """The workspace's context as an LLM should read it: every item of the window
        (files, regions, errors, notes), newest last, within max_tokens if given (pinned
        items first). With query, archived items relevant to it are appended under
        "Relevant history"; with auto_retrieve too, every archived item close enough in
        meaning fills the tokens the window leaves. Use it before answering questions
        about this workspace."""
        rendered = await connection.call(
            Requests.RENDER,
            RenderParams(
                workspace=connection.workspace,
                format=format,
                max_tokens=max_tokens,
                query=query,
                auto_retrieve=auto_retrieve,
            ),
        )
        if not rendered.item_ids and not rendered.history_ids:
            return "(the context window is empty)"
        text: str = rendered.text
        return text

    @server.tool()
    async def add_file(path: str, pin: bool = False) -> str:
        """Add a whole file of the workspace to the context (a path relative to the
        workspace root). Use it when a file matters to the task; it follows later edits.
        pin keeps it from being evicted when the window is full."""
        result = await connection.call(
            Requests.ADD_FILE,
            AddFileParams(workspace=connection.workspace, uri=connection.file_uri(path), pin=pin),
        )
        return _added(result)

    @server.tool()
    async def add_region(path: str, start_line: int, end_line: int, pin: bool = False) -> str:
        """Add lines start_line..end_line (1-based, inclusive) of a workspace file to the
        context: the function or passage that matters, rather than the whole file."""
        if start_line < 1 or end_line < start_line:
            raise ToolError("lines are 1-based, and end_line cannot come before start_line")
        span = Range(
            start=Position(line=start_line - 1, character=0),
            end=Position(line=end_line, character=0),
        )
        result = await connection.call(
            Requests.ADD_REGION,
            AddRegionParams(
                workspace=connection.workspace, uri=connection.file_uri(path), range=span, pin=pin
            ),
        )
        return _added(result)

    @server.tool()
    async def add_text(content: str, kind: ItemKind = "text", pin: bool = False) -> str:
        """Add a piece of text to the context: a note, a decision, an error message
        (kind "error"), a shell transcript (kind "repl-history") or code (kind "code")."""
        result = await connection.call(
            Requests.ADD_TEXT,
            AddTextParams(workspace=connection.workspace, content=content, kind=kind, pin=pin),
        )
        return _added(result)

    @server.tool()
    async def search_archive(
        query: str, limit: int = 10, mode: SearchMode | None = None
    ) -> dict[str, Any]:
        """Search the items that left the window (evicted, removed, cleared). By default by
        words and meaning together when the server has semantic search (else by words):
        describe what you need in your own words, or give an exact identifier or error
        message. mode "semantic" searches by meaning only, "keyword" by words only. Each
        hit has an id to restore and says which search found it."""
        result = await connection.call(
            Requests.SEARCH,
            SearchParams(
                workspace=connection.workspace,
                query=query,
                limit=max(1, min(limit, 100)),
                mode=mode,
            ),
        )
        hits = [
            {
                "id": hit.item.id,
                "label": hit.item.label,
                "score": hit.score,
                "found_by": hit.modes,
                "snippet": hit.snippet,
            }
            for hit in result.hits
        ]
        return {"mode": result.mode, "warning": result.warning, "hits": hits}

    @server.tool()
    async def restore(ids: list[str]) -> str:
        """Bring archived items back into the window (ids from search_archive)."""
        result = await connection.call(
            Requests.RESTORE, RestoreParams(workspace=connection.workspace, ids=ids)
        )
        done = [f"restored {item.id} ({item.label})" for item in result.items]
        done += [f"{i} was already in the window" for i in result.already_in_window]
        done += [f"evicted {item.id} ({item.label}) to make room" for item in result.evicted]
        return "\n".join(done) or "nothing to restore"

    @server.tool()
    async def pin(id: str, pinned: bool = True) -> str:
        """Pin an item so it is never evicted (pinned=false unpins it)."""
        result = await connection.call(
            Requests.PIN, PinParams(workspace=connection.workspace, id=id, pinned=pinned)
        )
        return f"{'pinned' if result.item.pinned else 'unpinned'} {result.item.id}"

    @server.tool()
    async def remove(ids: list[str]) -> str:
        """Take items out of the window (to the archive, where they can be restored)."""
        result = await connection.call(
            Requests.REMOVE, RemoveParams(workspace=connection.workspace, ids=ids)
        )
        return f"removed {', '.join(result.removed)} to the archive"

    @server.tool()
    async def status() -> dict[str, Any]:
        """How full the window is: tokens and items against their limits, what goes next."""
        params = StatusParams(workspace=connection.workspace)
        result = await connection.call(Requests.STATUS, params)
        return {
            "tokens": result.tokens,
            "maxTokens": result.max_tokens,
            "items": result.item_count,
            "maxItems": result.max_items,
            "pinned": result.pinned_count,
            "stale": result.stale_count,
            "archived": result.archived_count,
            "nextEviction": result.next_eviction.id if result.next_eviction else None,
        }


def _resources(server: MCPServer, connection: Connection) -> None:
    @server.resource(connection.context_uri, name="context", mime_type="text/markdown")
    async def context() -> str:
        """The workspace's context window, rendered as markdown (updated on every change)."""
        try:
            rendered = await connection.call(
                Requests.RENDER, RenderParams(workspace=connection.workspace)
            )
        except ToolError as error:
            raise ResourceNotFoundError(str(error)) from error
        text: str = rendered.text
        return text

    @server.resource(f"{CONTEXT_SCHEME}://item/{{item_id}}", name="item", mime_type="text/plain")
    async def item(item_id: str) -> str:
        """One item of the window, its text as it is held."""
        listed = await connection.call(Requests.LIST, ListParams(workspace=connection.workspace))
        for held in listed.items:
            if held.id == item_id:
                content: str = held.content
                return content
        raise ResourceNotFoundError(f"{item_id} is not in the window")


def main(place: Place) -> int:
    build(place).run("stdio")
    return 0
