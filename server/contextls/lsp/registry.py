"""The handler of every request, registered next to it (``@handles(p.Requests.X)``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from contextls import protocol as p

if TYPE_CHECKING:
    from contextls.lsp.server import ContextServer

Handler = Callable[["ContextServer", Any], msgspec.Struct | Awaitable[msgspec.Struct]]
H = TypeVar("H", bound=Handler)
HANDLERS: dict[p.Request[Any, Any], Handler] = {}
"""The handler of every request of the protocol's method table (``p.Requests``)."""


def handles(request: p.Request[Any, Any]) -> Callable[[H], H]:
    """Make the function below the handler of ``request``: one line, next to it."""

    def register(handle: H) -> H:
        HANDLERS[request] = handle
        return handle

    return register
