"""The contextls client: an LSP client library and the ``contextls`` CLI built on it.

>>> from contextls_client import ContextlsClient
>>> async def window_tokens(root: str) -> int:
...     async with ContextlsClient() as client:
...         await client.initialize(root)
...         return (await client.call(Requests.STATUS, StatusParams())).tokens
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from contextls_client.lsp_client import DEFAULT_SERVER_COMMAND, ContextlsClient
    from contextls_client.messages import ContextlsError, ReceivedNotification, ServerGoneError

__all__ = [
    "DEFAULT_SERVER_COMMAND",
    "ContextlsClient",
    "ContextlsError",
    "ReceivedNotification",
    "ServerGoneError",
]


def __getattr__(name: str) -> Any:
    # Loaded when asked for: the asyncio client costs a CLI command ~30 ms it rarely needs.
    if name in ("DEFAULT_SERVER_COMMAND", "ContextlsClient"):
        from contextls_client import lsp_client

        return getattr(lsp_client, name)
    if name in ("ContextlsError", "ReceivedNotification", "ServerGoneError"):
        from contextls_client import messages

        return getattr(messages, name)
    raise AttributeError(name)
