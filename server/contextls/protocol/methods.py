"""The method table: every request with its params and result types, once.

A server implements a request by registering a handler for its ``Request``
(``contextls.lsp.handlers``); a client calls it with the same object
(``client.call(Requests.STATUS, StatusParams())``), typed end to end.
"""

from __future__ import annotations

from typing import Final, Generic, TypeVar

from contextls.protocol.conversation import PrepareConversationParams, PrepareConversationResult
from contextls.protocol.params import (
    AddFileParams,
    AddFilesParams,
    AddRegionParams,
    AddSymbolParams,
    AddTextParams,
    ClearParams,
    ConfigureParams,
    CountTokensParams,
    ExportDocument,
    ExportParams,
    ForgetParams,
    ImportParams,
    ListParams,
    PinParams,
    RefreshParams,
    RemoveParams,
    RenderParams,
    RestoreParams,
    SearchParams,
    ServerInfoParams,
    StatusParams,
)
from contextls.protocol.results import (
    AddFilesResult,
    AddResult,
    ClearResult,
    ConfigureResult,
    CountTokensResult,
    ForgetResult,
    ImportResult,
    ListResult,
    PinResult,
    RefreshResult,
    RemoveResult,
    RenderResult,
    RestoreResult,
    SearchResult,
    ServerInfo,
)
from contextls.protocol.status import DidEvictParams, DidWarnParams, Status
from contextls.protocol.structure import (
    AddMapParams,
    AddNamedSymbolParams,
    SetViewParams,
    SetViewResult,
    SymbolAtParams,
    SymbolAtResult,
)
from contextls.protocol.wire import Wire

__all__ = ["METHODS", "NOTIFICATIONS", "Notification", "Request", "Requests"]


class Notification:
    DID_CHANGE_STATUS: Final = "contextls/didChangeStatus"
    DID_EVICT: Final = "contextls/didEvict"
    DID_WARN: Final = "contextls/didWarn"


P = TypeVar("P", bound=Wire)
R = TypeVar("R", bound=Wire)


class Request(Generic[P, R]):
    """A request as clients call it: its method, params type and result type.

    A plain class: every CLI command imports this module, and ``dataclasses``
    (with the ``inspect`` it loads) would add ~7 ms to each.
    """

    __slots__ = ("method", "params", "result")

    def __init__(self, method: str, params: type[P], result: type[R]) -> None:
        self.method = method
        self.params = params
        self.result = result

    def __repr__(self) -> str:
        return f"Request({self.method!r}, {self.params.__name__}, {self.result.__name__})"


class Requests:
    """Every request, typed (``client.call(Requests.STATUS, StatusParams())``)."""

    ADD_REGION: Final = Request("contextls/addRegion", AddRegionParams, AddResult)
    ADD_FILE: Final = Request("contextls/addFile", AddFileParams, AddResult)
    ADD_SYMBOL: Final = Request("contextls/addSymbol", AddSymbolParams, AddResult)
    ADD_TEXT: Final = Request("contextls/addText", AddTextParams, AddResult)
    ADD_FILES: Final = Request("contextls/addFiles", AddFilesParams, AddFilesResult)
    REMOVE: Final = Request("contextls/remove", RemoveParams, RemoveResult)
    PIN: Final = Request("contextls/pin", PinParams, PinResult)
    CLEAR: Final = Request("contextls/clear", ClearParams, ClearResult)
    LIST: Final = Request("contextls/list", ListParams, ListResult)
    RENDER: Final = Request("contextls/render", RenderParams, RenderResult)
    STATUS: Final = Request("contextls/status", StatusParams, Status)
    SEARCH: Final = Request("contextls/search", SearchParams, SearchResult)
    RESTORE: Final = Request("contextls/restore", RestoreParams, RestoreResult)
    COUNT_TOKENS: Final = Request("contextls/countTokens", CountTokensParams, CountTokensResult)
    PREPARE_CONVERSATION: Final = Request(
        "contextls/prepareConversation", PrepareConversationParams, PrepareConversationResult
    )
    REFRESH: Final = Request("contextls/refresh", RefreshParams, RefreshResult)
    CONFIGURE: Final = Request("contextls/configure", ConfigureParams, ConfigureResult)
    SERVER_INFO: Final = Request("contextls/serverInfo", ServerInfoParams, ServerInfo)
    FORGET: Final = Request("contextls/forget", ForgetParams, ForgetResult)
    EXPORT: Final = Request("contextls/export", ExportParams, ExportDocument)
    IMPORT: Final = Request("contextls/import", ImportParams, ImportResult)
    ADD_NAMED_SYMBOL: Final = Request("contextls/addSymbolByName", AddNamedSymbolParams, AddResult)
    SYMBOL_AT: Final = Request("contextls/symbolAt", SymbolAtParams, SymbolAtResult)
    SET_VIEW: Final = Request("contextls/setView", SetViewParams, SetViewResult)
    ADD_MAP: Final = Request("contextls/addMap", AddMapParams, AddResult)


METHODS: Final[dict[str, tuple[type[Wire], type[Wire]]]] = {
    request.method: (request.params, request.result)
    for request in vars(Requests).values()
    if isinstance(request, Request)
}
"""Every request: method name -> (params type, result type)."""

NOTIFICATIONS: Final[dict[str, type[Wire]]] = {
    Notification.DID_CHANGE_STATUS: Status,
    Notification.DID_EVICT: DidEvictParams,
    Notification.DID_WARN: DidWarnParams,
}
"""Every server -> client notification: method name -> params type."""
