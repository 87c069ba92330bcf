"""``contextls mcp``: the workspace's context for LLM agents, over the Model Context Protocol.

An MCP server over stdio (the official ``mcp`` SDK, the optional extra
``contextls[mcp]``) that is a client of the user's shared daemon: one LSP session
on the socket of the database the CLI and the editors use, for one workspace.
What an agent adds lands in the window the editors and the CLI see, and every
change to that window, from anywhere, reaches the agent as a resource update.

Start-up is ordered for the host, which waits on ``initialize``: it is answered
first (``mcp.handshake``), then the daemon is reached in a thread while the SDK
loads (``mcp.link``), and the SDK serves everything after (``mcp.server``).
"""

from __future__ import annotations

import importlib.util
import os
from typing import Final

from contextls import __version__
from contextls.common.places import resolve_storage
from contextls_client.mcp.early import EarlyAnswers
from contextls_client.mcp.handshake import Wire, early_answer, encode, note
from contextls_client.session import Place

if importlib.util.find_spec("mcp") is None:  # `contextls mcp` says to install the extra
    raise ModuleNotFoundError("No module named 'mcp'", name="mcp")

INSTRUCTIONS: Final = """\
contextls keeps the context of this workspace: the files, regions, errors and notes the \
person (in their editor or shell) or you marked as relevant, within a token budget. Read it \
with get_context (or the context resource, or the context prompt) before answering \
questions about this code; add what you find relevant with add_file, add_region or \
add_text; every item has an id (ctx-N) to pin, remove or refresh it. Things that fell out \
of the window are in the archive: search_archive, then restore. The person sees every \
change in their editor's status bar. Database: {database}"""


def main(place: Place, workspace_given: bool) -> int:
    """Serve MCP on stdio until the host closes it.

    ``workspace_given``: whether ``--workspace`` chose ``place.root`` (else the host's
    roots may).
    """
    database = resolve_storage(place.storage)
    instructions = INSTRUCTIONS.format(database=database)
    wire = Wire()
    opening = wire.read_line()
    server_info = {"name": "contextls", "version": __version__}
    answered = early_answer(opening, server_info, instructions)
    if answered is not None:
        wire.write(encode(answered))
    modern = answered is not None and "supportedVersions" in answered["result"]
    early = EarlyAnswers(wire, answered, modern, server_info)  # tools/list, while the SDK loads
    note(f"database {database}; contextls {__version__}, pid {os.getpid()}")

    from contextls_client.mcp.link import DaemonLink

    link = DaemonLink(place)  # reaches the daemon in a thread while the SDK loads

    import anyio

    from contextls_client.mcp.server import McpServer

    server = McpServer(place, workspace_given, instructions, link)
    anyio.run(server.run, wire, opening, early)
    return 0
