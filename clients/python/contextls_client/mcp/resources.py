"""The window as MCP resources (the rendered context, and each item) and as a prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import mcp_types as types
from mcp.shared.exceptions import MCPError

from contextls.protocol import ContextItem, ListParams, RenderParams, Requests
from contextls_client.mcp.link import DaemonLink
from contextls_client.mcp.words import cut, item_entry

SCHEME: Final = "contextls"
ITEM_PREFIX: Final = f"{SCHEME}://item/"
ITEM_TEMPLATE: Final = f"{ITEM_PREFIX}{{item_id}}"
PROMPT: Final = "context"


def context_uri(root: Path) -> str:
    return f"{SCHEME}://context/{root.name or 'workspace'}"


def item_uri(item_id: str) -> str:
    return f"{ITEM_PREFIX}{item_id}"


def context_resource(root: Path) -> types.Resource:
    return types.Resource(
        uri=context_uri(root),
        name="context",
        title=f"contextls window of {root.name or root}",
        description="The workspace's context window, rendered as markdown (updated on every "
        "change).",
        mime_type="text/markdown",
    )


def item_resource(item: ContextItem) -> types.Resource:
    return types.Resource(
        uri=item_uri(item.id),
        name=item.id,
        title=item.label,
        description=item_entry(item),
        mime_type="text/plain",
    )


ITEM_RESOURCE_TEMPLATE: Final = types.ResourceTemplate(
    uri_template=ITEM_TEMPLATE,
    name="item",
    title="An item of the window",
    description="One item of the window, its text as it is held.",
    mime_type="text/plain",
)

CONTEXT_PROMPT: Final = types.Prompt(
    name=PROMPT,
    title="The workspace's context",
    description="The context window of this workspace (the files, regions, errors and notes "
    "the person and agents marked as relevant), as a message.",
    arguments=[
        types.PromptArgument(
            name="query",
            description="Also include the archived items relevant to this text.",
            required=False,
        )
    ],
)


CACHE_BREAKPOINTS = "contextls/cacheBreakpoints"
"""The ``_meta`` key of the context resource that lists its cache breakpoints: ``after``
(``pinned``, ``settled`` or ``end``), ``offset`` (characters of the text before it) and
``tokens`` (the same in the window's model)."""


async def listed(link: DaemonLink) -> list[types.Resource]:
    assert link.root is not None
    items = (await link.call(Requests.LIST, ListParams(workspace=link.workspace))).items
    return [context_resource(link.root), *(item_resource(item) for item in items)]


async def read(link: DaemonLink, uri: str) -> types.TextResourceContents:
    assert link.root is not None
    if uri == context_uri(link.root):
        rendered = await link.call(Requests.RENDER, RenderParams(workspace=link.workspace))
        # Where the parts that change least end, for a host's prompt-cache markers.
        breakpoints = [
            {"after": mark.after, "offset": mark.offset, "tokens": mark.tokens}
            for mark in rendered.breakpoints
        ]
        return types.TextResourceContents(
            uri=uri,
            text=rendered.text,
            mime_type="text/markdown",
            _meta={CACHE_BREAKPOINTS: breakpoints},
        )
    if uri.startswith(ITEM_PREFIX):
        wanted = uri.removeprefix(ITEM_PREFIX)
        items = (await link.call(Requests.LIST, ListParams(workspace=link.workspace))).items
        for item in items:
            if item.id == wanted:
                return types.TextResourceContents(
                    uri=uri, text=item.content, mime_type="text/plain"
                )
        raise MCPError(types.INVALID_PARAMS, f"{cut(wanted)} is not in the window", {"uri": uri})
    raise MCPError(types.INVALID_PARAMS, f"no such resource: {cut(uri)}", {"uri": uri})


async def prompt(link: DaemonLink, query: str | None) -> types.GetPromptResult:
    rendered = await link.call(
        Requests.RENDER, RenderParams(workspace=link.workspace, query=query or None)
    )
    text = rendered.text if rendered.item_ids or rendered.history_ids else "(empty)"
    return types.GetPromptResult(
        description="The context of this workspace, kept by contextls",
        messages=[
            types.PromptMessage(
                role="user",
                content=types.TextContent(
                    type="text",
                    text=f"The context of this workspace, as contextls keeps it:\n\n{text}",
                ),
            )
        ],
    )
