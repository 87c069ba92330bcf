"""From one frame body to a handler: our requests directly, the rest through pygls.

Measured here, pygls' ``handle_message`` route costs a custom request more
than the work behind it: a future and a done-callback per request, cattrs
unstructuring a result that is already made of builtins, ``json.dumps``. So
the ``contextls/*`` requests with a synchronous handler are answered here:
params as the decoded dict, the result (a msgspec Struct) encoded by msgspec
straight into the outbox. Everything else (the LSP lifecycle, document sync,
workspace events, ``$/cancelRequest``, the asynchronous
``prepareConversation``, responses to our own requests) goes to pygls'
``structure_message``/``handle_message`` as before, typed by lsprotocol.

Unlike pygls' loop the dispatcher also answers what it cannot read: a body
that is not JSON gets -32700, a request that is not a JSON-RPC object -32600,
and a standard request whose params do not fit their lsprotocol type -32602
naming the field, instead of being dropped without a reply.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import cattrs
import msgspec
from lsprotocol.types import ErrorCodes
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol

from contextls.lsp.framing import Outbox

log = logging.getLogger(__name__)

DirectHandler = Callable[[Any], Any]
"""Raw params in, a msgspec-encodable result out; failures raise JsonRpcException."""

INVALID_REQUEST = int(ErrorCodes.InvalidRequest)
INTERNAL_ERROR = int(ErrorCodes.InternalError)
PARSE_ERROR = int(ErrorCodes.ParseError)
INVALID_PARAMS = int(ErrorCodes.InvalidParams)


class Dispatcher:
    def __init__(
        self,
        protocol: JsonRPCProtocol,
        outbox: Outbox,
        direct: Mapping[str, DirectHandler],
        shutting_down: Callable[[], bool],
        changes_made: Callable[[], int],
    ) -> None:
        self.protocol = protocol
        self.outbox = outbox
        self.direct = direct
        self.shutting_down = shutting_down
        self.changes_made = changes_made
        """Counts changes; an answer given while it grew waits for their commit."""
        self._decoder = msgspec.json.Decoder()

    def __call__(self, body: bytes) -> None:
        try:
            data = self._decoder.decode(body)
        except msgspec.DecodeError as error:
            self.outbox.error(None, PARSE_ERROR, f"parse error: {error}")
            return
        if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
            msg_id = data.get("id") if isinstance(data, dict) else None
            self.outbox.error(
                msg_id, INVALID_REQUEST, "invalid request: expected a JSON-RPC 2.0 object"
            )
            return
        method = data.get("method")
        if method is not None and not isinstance(method, str):
            self.outbox.error(
                data.get("id"), INVALID_REQUEST, "invalid request: method must be a string"
            )
            return
        is_request = "id" in data and method is not None
        if is_request:
            if self.shutting_down():
                # LSP: requests after `shutdown` are answered with InvalidRequest
                # (pygls would drop them without a reply).
                self.outbox.error(data["id"], INVALID_REQUEST, "the server is shutting down")
                return
            handle = self.direct.get(method)  # type: ignore[arg-type]
            if handle is not None:
                self._answer(data["id"], handle, data.get("params"))
                return
        self._through_pygls(data, method, is_request)

    def _answer(self, msg_id: Any, handle: DirectHandler, params: Any) -> None:
        if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
            self.outbox.error(
                None, INVALID_REQUEST, "invalid request: id must be a number or a string"
            )
            return
        before = self.changes_made()
        try:
            result = handle(params)
            self.outbox.respond(msg_id, result, reports_change=self.changes_made() != before)
        except JsonRpcException as error:
            self.outbox.error(msg_id, error.code, error.message, error.data)
        except Exception as error:  # the handlers map every error; this is a last resort
            log.exception("request %r failed", msg_id)
            self.outbox.error(msg_id, INTERNAL_ERROR, f"internal error: {error}")

    def _through_pygls(self, data: dict[str, Any], method: Any, is_request: bool) -> None:
        try:
            message = self.protocol.structure_message(data)
        except Exception as error:
            if is_request:
                self.outbox.error(data["id"], INVALID_PARAMS, _describe(method, error))
            else:
                log.warning("dropped a malformed message: %s", _describe(method, error))
            return
        self.protocol.handle_message(message)


def _describe(method: Any, error: Exception) -> str:
    cause = error.__cause__
    if isinstance(cause, cattrs.BaseValidationError):
        details = "; ".join(cattrs.transform_error(cause, path="$"))
        return f"invalid params for {method}: {details}"
    return f"invalid message for {method}: {cause or error}"
