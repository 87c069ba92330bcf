"""Which workspace an MCP session serves.

``--workspace`` when given. Otherwise the host's roots, when it declares them (a host
started from ``/``, as Claude Desktop is on macOS, still says which project it has
open), else the project around the directory the host started the server in. ``/``
and the home directory are never a workspace: then the agent is told to have the
server started with ``--workspace``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from contextls_client.human import uri_to_path
from contextls_client.session import Place

RootsAsker = Callable[[], Awaitable[Sequence[str]]]
"""Asks the host for its roots (``file://`` URIs)."""


class NoWorkspace(Exception):
    """No workspace can be chosen; the message says how to give one."""


def too_wide(folder: Path) -> bool:
    return folder in (Path(folder.anchor), Path.home().resolve())


def from_roots(uris: Sequence[str]) -> Path | None:
    """The first root that is a local folder narrower than the home directory."""
    for uri in uris:
        if not uri.startswith("file:"):
            continue
        folder = Path(uri_to_path(uri)).resolve()
        if folder.is_dir() and not too_wide(folder):
            return folder
    return None


async def choose(place: Place, given: bool, ask_roots: RootsAsker | None) -> Path:
    """The workspace folder of this session (see the module's docstring)."""
    if given:
        return place.root
    declared: Sequence[str] = ()
    if ask_roots is not None:
        declared = await ask_roots()
        chosen = from_roots(declared)
        if chosen is not None:
            return chosen
    if not too_wide(place.root):
        return place.root
    why = (
        f"the host's roots ({', '.join(declared)}) hold no project folder"
        if declared
        else "the host declared no roots"
    )
    raise NoWorkspace(
        f"contextls mcp does not know which project to serve: it was started in {place.root}, "
        f"and {why}. Have it started with --workspace /path/to/the/project (in the host's MCP "
        'configuration: "args": ["mcp", "--workspace", "/path/to/the/project"])'
    )
