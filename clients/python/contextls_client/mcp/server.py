"""The MCP server: the SDK's low-level ``Server``, its handlers, and its run over the wire.

The low-level server (rather than ``MCPServer``'s decorators) because what hosts see
is decided here: each tool's title, annotations and described parameters, text-only
results, refusals in words, and ``resources/subscribe`` on handshake-era sessions.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, cast

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from contextls import __version__
from contextls_client.mcp import resources
from contextls_client.mcp.arguments import input_schema, parse
from contextls_client.mcp.changes import Changes
from contextls_client.mcp.early import EarlyAnswers
from contextls_client.mcp.handshake import Wire, note
from contextls_client.mcp.link import DaemonLink, Unreachable
from contextls_client.mcp.stdio import HeldBackOutput, ReplayedInput
from contextls_client.mcp.tools import TOOLS, TOOLS_BY_NAME, Tool
from contextls_client.mcp.words import Refusal, cut, refusal
from contextls_client.mcp.workspace import NoWorkspace, RootsAsker, choose
from contextls_client.messages import ContextlsError
from contextls_client.session import Place

NAME: Final = "contextls"
ROOTS_TIMEOUT: Final = 10.0
"""Seconds to wait for the host's answer to ``roots/list``."""

Context = ServerRequestContext[dict[str, Any]]


def mcp_tool(tool: Tool) -> types.Tool:
    hints = tool.hints
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=input_schema(tool.arguments),
        annotations=types.ToolAnnotations(
            title=tool.title,
            read_only_hint=hints.read_only,
            destructive_hint=hints.destructive,
            idempotent_hint=hints.idempotent,
            open_world_hint=False,
        ),
    )


def text_result(text: str, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=is_error
    )


class McpServer:
    """One host's session: the workspace it serves, its daemon link, its subscriptions."""

    def __init__(
        self, place: Place, workspace_given: bool, instructions: str, link: DaemonLink
    ) -> None:
        self.place = place
        self.workspace_given = workspace_given
        self.bus = InMemorySubscriptionBus()
        self.link = link
        self.changes = Changes(link, self.bus)
        link.on_change = self.changes.noticed
        self._binding = asyncio.Lock()
        self._listen = ListenHandler(self.bus)
        self.server: Server[dict[str, Any]] = Server(
            NAME,
            version=__version__,
            instructions=instructions,
            lifespan=self._lifespan,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_subscribe_resource=self._subscribe,
            on_unsubscribe_resource=self._unsubscribe,
            on_subscriptions_listen=self._subscriptions_listen,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )

    @asynccontextmanager
    async def _lifespan(self, _: Server[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            await self.link.close()

    async def run(self, wire: Wire, opening: bytes, early: EarlyAnswers) -> None:
        early.sdk_runs()
        output = HeldBackOutput(wire, early)
        source = cast(Any, ReplayedInput(early, opening))
        async with stdio_server(stdin=source, stdout=cast(Any, output)) as (read, write):
            await self.server.run(
                read,
                write,
                self.server.create_initialization_options(
                    NotificationOptions(resources_changed=True)
                ),
            )

    # ------------------------------------------------------------ the workspace

    async def _ready(self, ctx: Context) -> None:
        """Bind the session to its workspace (once), asking the host's roots if need be."""
        self._remember(ctx)
        async with self._binding:
            if self.link.root is not None:
                return
            root = await choose(self.place, self.workspace_given, self._roots_asker(ctx))
            self.link.bind(root)
            await self.changes.prime()
            info = self.link.info
            note(
                f"serving {root}; database {info.storage if info else '?'} "
                f"(daemon pid {info.pid if info else '?'})"
            )

    def _remember(self, ctx: Context) -> None:
        """A handshake-era session is told of changes directly (see ``changes``)."""
        if self.changes.session is None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self.changes.session = ctx.session

    def _roots_asker(self, ctx: Context) -> RootsAsker | None:
        capabilities = ctx.session.client_capabilities
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return None  # no server-to-client requests at 2026-07-28
        if capabilities is None or capabilities.roots is None:
            return None

        async def ask() -> Sequence[str]:
            try:
                with anyio.fail_after(ROOTS_TIMEOUT):
                    answer = await ctx.session.send_request(
                        types.ListRootsRequest(), types.ListRootsResult
                    )
            except (MCPError, TimeoutError, ValueError) as error:
                note(f"the host did not list its roots: {error}")
                return ()
            return [str(root.uri) for root in answer.roots]

        return ask

    # ------------------------------------------------------------ tools

    async def _list_tools(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._remember(ctx)
        return types.ListToolsResult(tools=[mcp_tool(tool) for tool in TOOLS])

    async def _call_tool(
        self, ctx: Context, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = TOOLS_BY_NAME.get(params.name)
        if tool is None:
            known = ", ".join(TOOLS_BY_NAME)
            return text_result(f"no tool {cut(params.name, 60)!r}; the tools are {known}", True)
        try:
            arguments = parse(tool.arguments, params.arguments)
            await self._ready(ctx)
            return text_result(await tool.run(self.link, arguments))
        except ContextlsError as error:
            return text_result(refusal(error), True)
        except (ValueError, Refusal, NoWorkspace, Unreachable) as error:
            return text_result(cut(str(error), 1000), True)
        except Exception as error:  # the agent gets a line; the host's log gets the traceback
            note(f"{params.name} failed:\n{traceback.format_exc()}")
            return text_result(f"{params.name} failed: {cut(repr(error), 300)}", True)

    # ------------------------------------------------------------ resources and prompts

    async def _list_resources(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        try:
            await self._ready(ctx)
            return types.ListResourcesResult(resources=await resources.listed(self.link))
        except (ContextlsError, NoWorkspace, Unreachable) as error:
            note(f"resources/list: {error}")
            return types.ListResourcesResult(resources=[])

    async def _list_templates(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[resources.ITEM_RESOURCE_TEMPLATE]
        )

    async def _read_resource(
        self, ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            await self._ready(ctx)
            contents = await resources.read(self.link, str(params.uri))
        except (ContextlsError, NoWorkspace, Unreachable) as error:
            raise MCPError(types.INVALID_PARAMS, cut(str(error), 1000)) from None
        return types.ReadResourceResult(contents=[contents])

    async def _subscribe(
        self, ctx: Context, params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        self._remember(ctx)
        self.changes.subscribed.add(str(params.uri))
        await self._start_listening(ctx)
        return types.EmptyResult()

    async def _unsubscribe(
        self, ctx: Context, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self.changes.subscribed.discard(str(params.uri))
        return types.EmptyResult()

    async def _subscriptions_listen(
        self, ctx: Context, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        await self._start_listening(ctx)
        return await self._listen(ctx, params)

    async def _start_listening(self, ctx: Context) -> None:
        """Changes come from the daemon session: open it, so they flow from now on."""
        try:
            await self._ready(ctx)
        except (ContextlsError, NoWorkspace, Unreachable) as error:
            note(f"subscribed, but the window cannot be watched yet: {error}")

    async def _list_prompts(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[resources.CONTEXT_PROMPT])

    async def _get_prompt(
        self, ctx: Context, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != resources.PROMPT:
            raise MCPError(types.INVALID_PARAMS, f"no prompt {cut(params.name, 60)!r}")
        try:
            await self._ready(ctx)
            return await resources.prompt(self.link, (params.arguments or {}).get("query"))
        except (ContextlsError, NoWorkspace, Unreachable) as error:
            raise MCPError(types.INVALID_PARAMS, cut(str(error), 1000)) from None
