"""The converter pygls structures messages with: custom params stay dicts.

Stock pygls 2.x turns the params of a method lsprotocol does not know into
namedtuples (``_dict_to_object``: a JSON round trip and a new class per
request). Ours hands them over as the decoded dicts; standard LSP messages are
still structured into lsprotocol types by the stock converter.
"""

from __future__ import annotations

import functools
from typing import Any

import cattrs
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)


@functools.cache
def converter_factory() -> cattrs.Converter:
    """pygls' converter, except custom messages keep their params as dicts.

    Made once per process: building it takes ~8 ms (lsprotocol registers a hook
    per type), and the daemon makes a server per connection. It holds no state
    of a connection, so every server shares it.
    """
    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]

    def request(obj: dict[str, Any], _: type) -> JsonRPCRequestMessage:
        return JsonRPCRequestMessage(
            id=obj["id"], method=obj["method"], jsonrpc=obj["jsonrpc"], params=obj.get("params")
        )

    def notification(obj: dict[str, Any], _: type) -> JsonRPCNotification:
        return JsonRPCNotification(
            method=obj["method"], jsonrpc=obj["jsonrpc"], params=obj.get("params")
        )

    def response(obj: dict[str, Any], _: type) -> JsonRPCResponseMessage:
        return JsonRPCResponseMessage(
            id=obj["id"], jsonrpc=obj["jsonrpc"], result=obj.get("result")
        )

    converter.register_structure_hook(JsonRPCRequestMessage, request)
    converter.register_structure_hook(JsonRPCNotification, notification)
    converter.register_structure_hook(JsonRPCResponseMessage, response)
    return converter
