"""What the Python clients call themselves on the wire (light: the quick path reads it)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

CLIENT_NAME: Final = "contextls-cli"
JSONRPC_VERSION: Final = "2.0"
