"""The contextls service behind stock pygls: what the own transport is measured against.

A plain ``pygls.lsp.server.LanguageServer`` with pygls' own converter, stdin
reader (a thread-pool read per header line and per body), dispatch (a future
and a done-callback per request) and writer (``json.dumps`` per message).
It registers ``initialize``, ``initialized``, ``shutdown``,
``contextls/addText`` and ``contextls/status`` with ``@server.feature`` and
calls the same application service the real server does, through the real
handler functions (``contextls.lsp.handlers.add_text`` / ``status``).

What it has to do that pygls does not do for it, kept as small as possible:

- Params arrive as pygls' namedtuples (``_dict_to_object``); they are turned
  back into dicts for the service's msgspec decoding.
- Results are msgspec Structs, which pygls cannot serialize; they go out as
  ``msgspec.to_builtins``.
- Durability: the handler commits the change (``ContextService.commit``)
  before it returns, so no answer reports an uncommitted add, as in the real
  server. pygls writes each answer as soon as its handler returns, so every
  request pays its own commit: it cannot share one among pipelined requests.
- The service's notifications (``didChangeStatus``, ``didEvict``) go out
  through ``protocol.notify``, so each add sends what the real server sends.

``--echo`` registers the same two requests as echoes (their params back, as
``plain`` dicts) with no service behind them: what stock pygls costs a request
by itself, the counterpart of ``echo_server.py``.

Run by ``bench_transport.py``; not part of the server.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, cast

import msgspec
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from contextls import protocol as p
from contextls.app.service import ContextService
from contextls.app.session import Session
from contextls.lsp import handlers
from contextls.lsp.jsonrpc import decode_params, to_jsonrpc
from contextls.lsp.server import ContextServer, later
from contextls.protocol import ContextItem, DidEvictParams, EvictionReason, Notification, Status


def plain(value: Any) -> Any:
    """pygls' params namedtuples (nested) back to the dicts and lists JSON gave."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


class StockServer:
    """The service and the session of one client, told of changes by the service."""

    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self.service = ContextService(
            listener=self, documents=self.document_text, warn=self.warn, later=later
        )
        self.session = Session(self.service, warn=self.warn)

    # --- the service's Listener: what the real server's hub sends each editor

    def status_changed(self, status: Status) -> None:
        self.server.protocol.notify(Notification.DID_CHANGE_STATUS, msgspec.to_builtins(status))

    def evicted(self, workspace: str, items: list[ContextItem], reason: EvictionReason) -> None:
        params = DidEvictParams(workspace=workspace, items=items, reason=reason)
        self.server.protocol.notify(Notification.DID_EVICT, msgspec.to_builtins(params))

    def document_text(self, uri: str) -> str | None:
        return None  # the bench opens no documents

    def warn(self, message: str) -> None:
        self.server.window_show_message(
            lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=f"contextls: {message}")
        )

    # --- requests

    def answer(self, handle: Any, params_type: type[msgspec.Struct], raw: Any) -> Any:
        """What the real server's ``_request`` + ``end_of_turn`` do, on pygls' path."""
        try:
            # The handlers only read ``ls.session`` (and ``ls.service``): this object has both.
            result = handle(cast(ContextServer, self), decode_params(plain(raw), params_type))
        except Exception as error:
            raise to_jsonrpc(error) from error
        if isinstance(result, p.AddResult):
            for warning in result.warnings:
                self.warn(warning)
        failure = self.service.commit()  # nothing is answered before it is saved
        if failure is not None:
            raise JsonRpcException(message=failure, code=int(p.ErrorCode.STORAGE))
        return msgspec.to_builtins(result)


def build() -> LanguageServer:
    server = LanguageServer("contextls-stock-pygls", "0")
    stock = StockServer(server)

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: LanguageServer, params: lsp.InitializeParams) -> None:
        folders = [folder.uri for folder in params.workspace_folders or []]
        if not folders and params.root_uri:
            folders = [params.root_uri]
        stock.session.configure(params.initialization_options, initial=True)
        stock.session.set_folders(folders)

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: LanguageServer, params: lsp.InitializedParams) -> None:
        stock.session.announce()

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: LanguageServer, *_: Any) -> None:
        stock.service.close()

    @server.feature(p.Requests.ADD_TEXT.method)
    def add_text(ls: LanguageServer, params: Any) -> Any:
        return stock.answer(handlers.add_text, p.AddTextParams, params)

    @server.feature(p.Requests.STATUS.method)
    def status(ls: LanguageServer, params: Any) -> Any:
        return stock.answer(handlers.status, p.StatusParams, params)

    return server


def build_echo() -> LanguageServer:
    server = LanguageServer("pygls-echo", "0")

    @server.feature(p.Requests.ADD_TEXT.method)
    def add_text(ls: LanguageServer, params: Any) -> Any:
        return plain(params)

    @server.feature(p.Requests.STATUS.method)
    def status(ls: LanguageServer, params: Any) -> Any:
        return plain(params)

    return server


def main() -> None:
    # The logging `contextls serve` sets up (INFO to stderr, pygls' own loggers quieter).
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    logging.getLogger("pygls").setLevel(logging.WARNING)
    logging.getLogger("pygls.protocol.json_rpc").setLevel(logging.CRITICAL)
    build_echo().start_io() if "--echo" in sys.argv[1:] else build().start_io()


if __name__ == "__main__":
    main()
