"""Thin handlers: decode params, call the service, return builtins.

Every custom request goes through ``_request``: params are decoded into the
method's Struct (-32602 naming the field otherwise), the service routes it to
its workspace (catching up with other processes' commits), and any error
becomes a JSON-RPC error. Nothing a client sends can take the server down.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Final, cast

import msgspec
from lsprotocol import types as lsp

from contextls import __version__
from contextls import protocol as p
from contextls.app import transfer
from contextls.app.configuring import precount
from contextls.app.files import RequestReads, one_read_per_file
from contextls.app.prepare import prepare_conversation
from contextls.app.transfer import Importing, checking_import
from contextls.common.build import build_id
from contextls.core.errors import ContextError
from contextls.core.secrets import warning_of
from contextls.lsp import add_handlers, structure_handlers
from contextls.lsp.archive_handlers import (  # registers them too
    after_other_clients,
    once_prepared,
    prepares,
)
from contextls.lsp.jsonrpc import decode_params, to_jsonrpc
from contextls.lsp.model_choices import model_choices
from contextls.lsp.registry import HANDLERS, handles
from contextls.lsp.server import ContextServer

log = logging.getLogger(__name__)

assert structure_handlers.__name__ and add_handlers.__name__  # registered when imported

BUILD = build_id()
"""The code this process runs, taken at start (clients restart a daemon whose build differs)."""


def register(server: ContextServer) -> None:
    _register_lifecycle(server)
    _register_requests(server)


def _register_lifecycle(server: ContextServer) -> None:
    @server.feature(lsp.INITIALIZE)
    def initialize(ls: ContextServer, params: lsp.InitializeParams) -> None:
        folders = [folder.uri for folder in params.workspace_folders or []]
        if not folders and params.root_uri:
            folders = [params.root_uri]
        elif not folders and params.root_path:
            folders = [params.root_path]
        ls.session.client = params.client_info.name if params.client_info else ""
        ls.hears_warnings = _declares_did_warn(params.capabilities)
        # What a daemon said at its start, while nobody listened, goes to its first client
        # (LSP lets window/showMessage through while initialize is answered).
        for message in ls.hub.unheard():
            ls.warn(message)
        # Settings first: they say whether a system folder may be a workspace.
        ls.session.configure(params.initialization_options, initial=True)
        ls.session.set_folders(folders)

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: ContextServer, params: lsp.InitializedParams) -> None:
        ls.warnings_held_until_initialized()
        _guarded(ls.session.announce)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: ContextServer, params: lsp.DidChangeConfigurationParams
    ) -> None:
        _guarded(lambda: ls.session.configure(params.settings))

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: ContextServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
        added = [folder.uri for folder in params.event.added]
        ls.session.set_folders(added, [folder.uri for folder in params.event.removed])
        _guarded(lambda: ls.session.announce(added))

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: ContextServer, params: lsp.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        _guarded(lambda: ls.hub.edited(ls, uri))
        _guarded(lambda: ls.service.document_changed(uri))

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: ContextServer, params: lsp.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        _guarded(lambda: ls.hub.opened(ls, uri))
        _guarded(lambda: ls.service.document_changed(uri))

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: ContextServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        _guarded(lambda: ls.hub.closed(ls, uri))
        _guarded(lambda: ls.service.document_changed(uri))

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: ContextServer, *_: Any) -> None:
        ls.has_shut_down = True
        ls.service.commit()  # the service is the process's (the daemon's): it stays open


def _declares_did_warn(capabilities: lsp.ClientCapabilities | None) -> bool:
    """The client takes warnings as data: ``experimental.contextls.didWarn`` is true."""
    experimental = capabilities.experimental if capabilities is not None else None
    ours = experimental.get("contextls") if isinstance(experimental, dict) else None
    return isinstance(ours, dict) and ours.get("didWarn") is True


def _guarded(action: Callable[[], None]) -> None:
    """Notifications have nobody to answer: log what went wrong and go on."""
    try:
        action()
    except Exception:
        log.exception("handling a notification failed")


def _request(
    server: ContextServer,
    request: p.Request[Any, Any],
    handle: Callable[[ContextServer, Any], msgspec.Struct | Awaitable[msgspec.Struct]],
) -> None:
    """A request answered in the turn that read it, or, when its handler hands back an
    awaitable (a large text, a large file), by a task of the dispatcher's."""
    params_type = request.params

    @server.request(request.method)
    def handler(raw: Any) -> msgspec.Struct | Awaitable[msgspec.Struct]:
        try:
            with one_read_per_file() as reads:
                result = handle(server, decode_params(raw, params_type))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # a native library's panic is an answer too
            raise to_jsonrpc(error) from error
        if inspect.isawaitable(result):  # large work: finished off the loop
            return _answered(server, result, reads)
        if isinstance(result, p.AddResult | p.AddFilesResult):
            _tell_secrets(server, result)
        return result


def _async_request(
    server: ContextServer,
    request: p.Request[Any, Any],
    handle: Callable[[ContextServer, Any], Awaitable[msgspec.Struct]],
) -> None:
    """A request whose work waits off the event loop: answered by a task of the
    dispatcher's, so other requests (other clients') are answered meanwhile."""
    params_type = request.params

    @server.request(request.method)
    def handler(raw: Any) -> Awaitable[msgspec.Struct]:
        try:
            params = decode_params(raw, params_type)
        except Exception as error:
            raise to_jsonrpc(error) from error
        return _answered(server, handle(server, params))


async def _answered(
    server: ContextServer, work: Awaitable[msgspec.Struct], reads: RequestReads | None = None
) -> msgspec.Struct:
    try:
        with one_read_per_file(reads):
            result = await work
    except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # a native library's panic is an answer too
        raise to_jsonrpc(error) from error
    if isinstance(result, p.AddResult | p.AddFilesResult):
        _tell_secrets(server, result)
    return result


def _tell_secrets(server: ContextServer, result: p.AddResult | p.AddFilesResult) -> None:
    """Said apart from the answer too: editors show it even if they ignore the field."""
    for found in result.secrets:
        server.warn(warning_of(found, result.status.workspace))


@handles(p.Requests.REMOVE)
def remove(ls: ContextServer, params: p.RemoveParams) -> p.RemoveResult:
    return ls.session.route(params.workspace).changes.remove(params.ids)


@handles(p.Requests.PIN)
def pin(ls: ContextServer, params: p.PinParams) -> p.PinResult:
    return ls.session.route(params.workspace).changes.pin(params.id, params.pin)


CLEAR_STEP_BYTES: Final = 2_000_000
"""The text a step of a large clear archives (~0.05 s of writes and its commit). A clear
of 820 files (19 MB) in one change held every client ~0.3 s, most of it SQLite's (its
overflow pages written to the archive, read to free them from the window's rows)."""


@handles(p.Requests.CLEAR)
def clear(ls: ContextServer, params: p.ClearParams) -> p.ClearResult | Awaitable[p.ClearResult]:
    changes = ls.session.route(params.workspace).changes
    steps = changes.clear_steps(params.keep_pinned, CLEAR_STEP_BYTES)
    if len(steps) <= 1:
        return changes.clear(params.keep_pinned)
    return _clear_in_steps(ls, params, steps)


async def _clear_in_steps(
    ls: ContextServer, params: p.ClearParams, steps: list[list[str]]
) -> p.ClearResult:
    """What the window held when the clear came, archived in steps, each committed before
    the next, with the requests the loop read meanwhile between them (as an import's).
    A failure says how much was cleared before it; a cancel lets the clear finish."""
    total = sum(map(len, steps))
    done: list[str] = []
    for step in steps:
        try:
            cleared = ls.session.route(params.workspace).changes.clear_step(
                step, params.keep_pinned
            )
            failure = ls.service.commit()
            if failure is not None:
                raise ContextError(failure, p.ErrorCode.STORAGE)
        except ContextError as error:
            if done:
                error = ContextError(
                    f"{error.message}; {len(done):,} of the {total:,} items were cleared "
                    "(archived) before it",
                    error.code,
                    error.data,
                )
            raise to_jsonrpc(error) from None
        done += cleared
        with contextlib.suppress(asyncio.CancelledError):
            await after_other_clients()
    return ls.session.route(params.workspace).changes.cleared(done)


@handles(p.Requests.LIST)
def list_items(ls: ContextServer, params: p.ListParams) -> p.ListResult:
    return ls.session.route(params.workspace).reader.list_items(params.kinds, params.limit)


@handles(p.Requests.RENDER)
def render(ls: ContextServer, params: p.RenderParams) -> p.RenderResult | Awaitable[p.RenderResult]:
    def answer() -> p.RenderResult | Awaitable[p.RenderResult]:
        return ls.session.route(params.workspace).reader.render(
            params.format,
            params.kinds,
            params.limit,
            params.max_tokens,
            params.query,
            params.auto_retrieve,
        )

    if params.query and prepares(ls, params.workspace, params.query):
        return once_prepared(ls, params.workspace, answer, params.query)
    return answer()


@handles(p.Requests.STATUS)
def status(ls: ContextServer, params: p.StatusParams) -> p.Status:
    workspace = ls.session.route(params.workspace)
    return msgspec.structs.replace(workspace.status(), semantic=workspace.reader.semantic_status())


@handles(p.Requests.RESTORE)
def restore(ls: ContextServer, params: p.RestoreParams) -> p.RestoreResult:
    return ls.session.route(params.workspace).changes.restore(
        params.ids, params.pin, params.dry_run
    )


@handles(p.Requests.PREPARE_CONVERSATION)
async def prepare(
    ls: ContextServer, params: p.PrepareConversationParams
) -> p.PrepareConversationResult:
    encoding = ls.session.route(params.workspace).settings.encoding if params.workspace else None
    tokenizer = ls.service.tokenizer(encoding)
    return await prepare_conversation(params, ls.session.settings.condense, tokenizer.count)


@handles(p.Requests.SERVER_INFO)
def server_info(ls: ContextServer, params: p.ServerInfoParams) -> p.ServerInfo:
    hub = ls.hub
    return p.ServerInfo(
        version=__version__,
        pid=os.getpid(),
        started_at=hub.started_at,
        daemon=hub.daemon,
        storage=ls.service.store.location,
        sessions=len(hub.servers),
        workspaces=ls.service.loaded_roots(),
        idle_timeout=hub.idle_timeout,
        semantic=ls.service.semantic_status(),
        socket=hub.socket,
        log=hub.log,
        executable=sys.executable,
        build=BUILD,
        models=model_choices(),
    )


@handles(p.Requests.EXPORT)
def export(ls: ContextServer, params: p.ExportParams) -> p.ExportDocument:
    return transfer.export(ls.session.route(params.workspace), params.archive)


@handles(p.Requests.IMPORT)
async def import_document(ls: ContextServer, params: p.ImportParams) -> p.ImportResult:
    """An import in bounded changes, each committed before the next, with other requests
    (other clients') served in between."""
    workspace = ls.session.route(params.workspace)
    root, max_bytes = workspace.sources.root, workspace.settings.max_file_bytes
    for _ in checking_import(params.document, root, max_bytes):
        await asyncio.sleep(0)  # nothing changed yet: other clients go first
    importing = Importing(workspace, params.document, checked=True)
    if params.dry_run:
        return importing.planned()
    counted = await asyncio.to_thread(importing.counted)
    with workspace.tokenizer.consulting(counted):
        while importing.step():
            failure = ls.service.commit()
            if failure is not None:
                raise to_jsonrpc(
                    ContextError(
                        f"{failure}; {importing.done:,} of {importing.total:,} items were "
                        "imported before it",
                        p.ErrorCode.STORAGE,
                    )
                )
            log.info("imported %d of %d items", importing.done, importing.total)
            await asyncio.sleep(0)
    return importing.result()


@handles(p.Requests.REFRESH)
def refresh(ls: ContextServer, params: p.RefreshParams) -> p.RefreshResult:
    return ls.session.route(params.workspace).follower.refresh(params.ids)


@handles(p.Requests.CONFIGURE)
async def configure(ls: ContextServer, params: p.ConfigureParams) -> p.ConfigureResult:
    """A change of model counts the window in the new tokens first, in a worker thread,
    so other clients are answered meanwhile (Claude's tokenizer counts ~0.3 MB/s)."""
    wanted = {
        key: value
        for key, value in msgspec.to_builtins(params.settings).items()
        if value is not None
    }
    workspace = ls.session.route(params.workspace)
    tokenizer = workspace.config.tokenizer_after(wanted, params.reset)
    if tokenizer is None:
        return workspace.config.configure(wanted, params.reset, params.dry_run, params.force)
    # A dry run counts the window as the change would.
    counted = await asyncio.to_thread(precount, tokenizer, list(workspace.window))
    workspace = ls.session.route(params.workspace)  # as it is now
    with tokenizer.consulting(counted):
        return workspace.config.configure(wanted, params.reset, params.dry_run, params.force)


def _register_requests(server: ContextServer) -> None:
    for request, handle in HANDLERS.items():
        if asyncio.iscoroutinefunction(handle):
            _async_request(server, request, handle)
        else:
            _request(server, request, cast(Callable[[ContextServer, Any], msgspec.Struct], handle))
