"""What the server refuses a client that acts for an agent rather than a person.

Decided here, for every agent's client (``AGENT_CLIENTS``, named in ``clientInfo``),
rather than in each of them.
"""

from __future__ import annotations

from urllib.parse import unquote

from contextls import protocol as p
from contextls.core.errors import ContextError
from contextls.core.secret_paths import is_secret_path


def refuse_secrets_to_agents(client: str, uri: str) -> None:
    """An agent may not add a file whose name says it holds credentials; its person may."""
    name = unquote(uri.rpartition("/")[2])
    if client in p.AGENT_CLIENTS and is_secret_path(name):
        raise ContextError(
            f"{name} looks like a file that holds secrets (keys, tokens, passwords); it is "
            "not added for an agent. The person can add it by name with `contextls add` if "
            "they mean to",
            p.ErrorCode.SECRET_FILE,
        )
