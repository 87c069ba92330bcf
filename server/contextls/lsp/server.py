"""The contextls language server: pygls plus the context service."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from contextls import __version__, semantic
from contextls.app.service import ContextService
from contextls.app.session import Session
from contextls.lsp.converter import converter_factory
from contextls.lsp.dispatch import DirectHandler
from contextls.lsp.hub import Hub
from contextls.lsp.outbox import Outbox
from contextls.protocol import (
    ContextItem,
    DidEvictParams,
    DidWarnParams,
    EvictionReason,
    Notification,
    Status,
)

log = logging.getLogger(__name__)


def later(delay: float, callback: Callable[[], None]) -> None:
    asyncio.get_running_loop().call_later(delay, callback)


def shared_service(hub: Hub) -> ContextService:
    """The service of a process, telling its changes to every client through ``hub``."""
    semantic.register()  # search by meaning, when its extra is installed
    return ContextService(listener=hub, documents=hub.documents, warn=hub.warn, later=later)


class ContextServer(LanguageServer):
    """One client's connection: tells its editor of status, evictions and warnings.

    ``serve --stdio`` has one; the daemon has one per connection, all sharing
    one service (and one hub, which passes every change to each of them).
    """

    def __init__(self, hub: Hub | None = None, service: ContextService | None = None) -> None:
        super().__init__(
            "contextls",
            __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            converter_factory=converter_factory,
        )
        self.outbox = Outbox(end_of_turn=self.end_of_turn)
        """Every message out goes through here, pygls' included (see ``transport``)."""
        self.requests: dict[str, DirectHandler] = {}
        """The ``contextls/*`` requests the dispatcher answers without pygls' dispatch."""
        self.has_shut_down = False
        self.hears_warnings = False
        """The client takes warnings as data (``contextls/didWarn``), not as words."""
        self._held_warnings: list[DidWarnParams] | None = []
        """Warnings as data wait for ``initialized`` (before it, LSP allows only
        ``window/showMessage``); None once it came."""
        self.hub = hub or Hub()
        self.service = service or shared_service(self.hub)
        self.session = Session(self.service, warn=self.warn)
        self.hub.join(self)

    def request(self, method: str) -> Callable[[DirectHandler], DirectHandler]:
        """Register ``handler(params) -> result`` for ``method`` (see ``dispatch``)."""

        def register(handler: DirectHandler) -> DirectHandler:
            self.requests[method] = handler
            return handler

        return register

    def shutting_down(self) -> bool:
        return self.has_shut_down

    def end_of_turn(self) -> None:
        """What one turn of the event loop produced leaves, in one write: first the commit
        of every change answered in it (and the notifications it announces), then the
        answers. Nothing leaves before the changes it tells of are committed."""
        self.outbox.hold()  # the notifications the commit announces join this write
        failed = self.service.commit()
        self.outbox.flush(failed)

    def uncommitted(self) -> bool:
        """Changes wait for their commit: an answer given now must wait for it too."""
        return self.service.unit_of_work.uncommitted

    # --- told by the hub

    def status_changed(self, status: Status) -> None:
        self.outbox.notify(Notification.DID_CHANGE_STATUS, status)

    def evicted(self, workspace: str, items: list[ContextItem], reason: EvictionReason) -> None:
        self.outbox.notify(
            Notification.DID_EVICT, DidEvictParams(workspace=workspace, items=items, reason=reason)
        )

    # --- editor services

    def warn(self, message: str | DidWarnParams) -> None:
        """Tell the person: as data (``contextls/didWarn``) to a client that declared it
        takes it, once ``initialized`` allows notifications of our own; else in words."""
        warning = message if isinstance(message, DidWarnParams) else DidWarnParams(message=message)
        log.warning("%s", warning.message)
        if not self.hears_warnings:
            self.window_show_message(
                lsp.ShowMessageParams(
                    type=lsp.MessageType.Warning, message=f"contextls: {warning.message}"
                )
            )
        elif self._held_warnings is not None:
            self._held_warnings.append(warning)
        else:
            self.outbox.notify(Notification.DID_WARN, warning)

    def warnings_held_until_initialized(self) -> None:
        """The client said ``initialized``: what was said while it started goes now."""
        held, self._held_warnings = self._held_warnings or [], None
        for warning in held:
            self.outbox.notify(Notification.DID_WARN, warning)

    def document_text(self, uri: str) -> str | None:
        """The text of ``uri`` if the editor has it open and synced, else None."""
        try:
            workspace = self.workspace
        except RuntimeError:  # not initialized yet
            return None
        document = workspace.text_documents.get(unquote(uri))
        return document.source if document is not None else None
