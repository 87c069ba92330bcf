"""The contextls language server: pygls plus the context service."""

from __future__ import annotations

import logging
from urllib.parse import unquote

import msgspec
from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from contextls import __version__
from contextls.lsp.transport import converter_factory
from contextls.protocol import ContextItem, DidEvictParams, EvictionReason, Notification, Status
from contextls.service import ContextService

log = logging.getLogger(__name__)


class ContextServer(LanguageServer):
    """Listens to the service and tells the editor: status, evictions, warnings."""

    def __init__(self) -> None:
        super().__init__(
            "contextls",
            __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            converter_factory=converter_factory,
        )
        self.service = ContextService(listener=self, documents=self.document_text, warn=self.warn)

    # --- Listener

    def status_changed(self, status: Status) -> None:
        self.protocol.notify(Notification.DID_CHANGE_STATUS, msgspec.to_builtins(status))

    def evicted(self, workspace: str, items: list[ContextItem], reason: EvictionReason) -> None:
        params = DidEvictParams(workspace=workspace, items=items, reason=reason)
        self.protocol.notify(Notification.DID_EVICT, msgspec.to_builtins(params))

    # --- editor services

    def warn(self, message: str) -> None:
        log.warning("%s", message)
        self.window_show_message(
            lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=f"contextls: {message}")
        )

    def document_text(self, uri: str) -> str | None:
        """The text of ``uri`` if the editor has it open and synced, else None."""
        try:
            workspace = self.workspace
        except RuntimeError:  # not initialized yet
            return None
        document = workspace.text_documents.get(unquote(uri))
        return document.source if document is not None else None
