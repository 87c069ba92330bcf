"""The contextls client: an LSP client library and the ``contextls`` CLI built on it.

>>> from contextls_client import ContextlsClient
>>> async def window_tokens(root: str) -> int:
...     async with ContextlsClient() as client:
...         await client.initialize(root)
...         return (await client.call(Requests.STATUS, StatusParams())).tokens
"""

from __future__ import annotations

from contextls_client.lsp_client import (
    DEFAULT_SERVER_COMMAND,
    ContextlsClient,
    ContextlsError,
    ReceivedNotification,
    ServerGoneError,
)

__all__ = [
    "DEFAULT_SERVER_COMMAND",
    "ContextlsClient",
    "ContextlsError",
    "ReceivedNotification",
    "ServerGoneError",
]
