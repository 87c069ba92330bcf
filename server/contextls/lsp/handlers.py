"""Thin handlers: decode params, call the service, return builtins.

Every custom request goes through ``_request``: params are decoded into the
method's Struct (-32602 naming the field otherwise), the service routes it to
its workspace (catching up with other processes' commits), and any error
becomes a JSON-RPC error. Nothing a client sends can take the server down.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, cast

import msgspec
from lsprotocol import types as lsp

from contextls import __version__
from contextls import protocol as p
from contextls.app import bulk, transfer
from contextls.app.configuring import precount
from contextls.app.files import uri_to_path
from contextls.app.model_counts import count_for_models
from contextls.app.prepare import prepare_conversation
from contextls.app.transfer import Importing, checking_import
from contextls.common.build import build_id
from contextls.core import candidates
from contextls.core.candidates import Candidate
from contextls.core.errors import ContextError
from contextls.lsp import structure_handlers
from contextls.lsp.agents import refuse_secrets_to_agents
from contextls.lsp.jsonrpc import decode_params, to_jsonrpc
from contextls.lsp.registry import HANDLERS, handles
from contextls.lsp.server import ContextServer

log = logging.getLogger(__name__)

assert structure_handlers.__name__  # its handlers are registered when it is imported

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
        # What a daemon said at its start, while nobody listened, goes to its first client
        # (LSP lets window/showMessage through while initialize is answered).
        for message in ls.hub.unheard():
            ls.warn(message)
        # Settings first: they say whether a system folder may be a workspace.
        ls.session.configure(params.initialization_options, initial=True)
        ls.session.set_folders(folders)

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: ContextServer, params: lsp.InitializedParams) -> None:
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
        _guarded(lambda: ls.service.document_changed(uri))

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: ContextServer, params: lsp.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        _guarded(lambda: ls.service.document_changed(uri))

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: ContextServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        _guarded(lambda: ls.service.document_changed(uri))

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: ContextServer, *_: Any) -> None:
        ls.has_shut_down = True
        ls.service.commit()  # the service is the process's (the daemon's): it stays open


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
            result = handle(server, decode_params(raw, params_type))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # a native library's panic is an answer too
            raise to_jsonrpc(error) from error
        if inspect.isawaitable(result):  # large work: finished off the loop
            return _answered(server, result)
        if isinstance(result, p.AddResult | p.AddFilesResult):
            for warning in result.warnings:  # editors show it even if they ignore the field
                server.warn(warning)
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


async def _answered(server: ContextServer, work: Awaitable[msgspec.Struct]) -> msgspec.Struct:
    try:
        result = await work
    except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # a native library's panic is an answer too
        raise to_jsonrpc(error) from error
    if isinstance(result, p.AddResult | p.AddFilesResult):
        for warning in result.warnings:  # editors show it even if they ignore the field
            server.warn(warning)
    return result


def _start_end(range_: p.Range) -> tuple[tuple[int, int], tuple[int, int]]:
    return (range_.start.line, range_.start.character), (range_.end.line, range_.end.character)


def _symbol_kind(kind: str | int | None) -> str | int | None:
    """LSP SymbolKind numbers become their names (``12`` -> ``"Function"``)."""
    if isinstance(kind, int):
        try:
            return lsp.SymbolKind(kind).name
        except ValueError:
            return kind
    return kind


@handles(p.Requests.ADD_REGION)
def add_region(ls: ContextServer, params: p.AddRegionParams) -> p.AddResult:
    refuse_secrets_to_agents(ls.session.client, params.uri)
    start, end = _start_end(params.range)
    workspace = ls.session.route(params.workspace, params.uri)
    return workspace.add_region(
        params.uri, start, end, params.text, params.language, params.metadata, params.pin
    )


@handles(p.Requests.ADD_SYMBOL)
def add_symbol(ls: ContextServer, params: p.AddSymbolParams) -> p.AddResult:
    start, end = _start_end(params.range)
    workspace = ls.session.route(params.workspace, params.uri)
    return workspace.add_editor_symbol(
        params.uri,
        start,
        end,
        params.name,
        _symbol_kind(params.symbol_kind),
        params.text,
        params.language,
        params.metadata,
        params.pin,
    )


OFF_LOOP_CHARS = 64 * 1024
"""Texts at least this long are counted (and files this large read, parsed, outlined) in
a worker thread, not on the loop that answers everyone (Claude's tokenizer counts ~1 MB/s,
an outline of a 900 KB file takes ~1 s)."""


@handles(p.Requests.ADD_FILE)
def add_file(ls: ContextServer, params: p.AddFileParams) -> p.AddResult | Awaitable[p.AddResult]:
    refuse_secrets_to_agents(ls.session.client, params.uri)
    workspace = ls.session.route(params.workspace, params.uri)
    if params.outline or _large_file(params.uri):
        return _add_file_off_loop(ls, params)
    return workspace.add_file(params.uri, params.language, params.metadata, params.pin)


async def _add_file_off_loop(ls: ContextServer, params: p.AddFileParams) -> p.AddResult:
    workspace = ls.session.route(params.workspace, params.uri)

    def read() -> Candidate:
        whole = workspace.file_candidate(params.uri, params.language, params.metadata, params.pin)
        candidate = workspace.outlined_candidate(whole) if params.outline else whole
        workspace.precount(candidate)
        return candidate

    candidate = await asyncio.to_thread(read)
    return ls.session.route(params.workspace, params.uri).add_candidate(candidate)


def _large_file(uri: str) -> bool:
    try:
        return os.stat(uri_to_path(uri)).st_size >= OFF_LOOP_CHARS
    except (OSError, ContextError):
        return False  # the add itself says what is wrong with it


@handles(p.Requests.ADD_FILES)
async def add_files(ls: ContextServer, params: p.AddFilesParams) -> p.AddFilesResult:
    """Expanded, read, outlined and counted in a worker thread; added on the loop."""
    first = next((target.uri for target in params.targets if target.uri), None)
    workspace = ls.session.route(params.workspace, first)
    plan = await asyncio.to_thread(bulk.read_plan, workspace, params)
    return bulk.add_files(ls.session.route(params.workspace, first), params, plan)


@handles(p.Requests.ADD_TEXT)
def add_text(ls: ContextServer, params: p.AddTextParams) -> p.AddResult | Awaitable[p.AddResult]:
    workspace = ls.session.route(params.workspace)
    if len(params.content) >= OFF_LOOP_CHARS:
        return _add_text_off_loop(ls, params)
    return workspace.add_text(
        params.kind, params.content, params.language, params.metadata, params.pin
    )


async def _add_text_off_loop(ls: ContextServer, params: p.AddTextParams) -> p.AddResult:
    workspace = ls.session.route(params.workspace)
    candidate = candidates.text(
        params.kind, params.content, params.language, params.metadata, params.pin
    )
    await asyncio.to_thread(workspace.precount, candidate)
    return ls.session.route(params.workspace).add_text(
        params.kind, params.content, params.language, params.metadata, params.pin
    )


@handles(p.Requests.REMOVE)
def remove(ls: ContextServer, params: p.RemoveParams) -> p.RemoveResult:
    return ls.session.route(params.workspace).remove(params.ids)


@handles(p.Requests.PIN)
def pin(ls: ContextServer, params: p.PinParams) -> p.PinResult:
    return ls.session.route(params.workspace).pin(params.id, params.pin)


@handles(p.Requests.CLEAR)
def clear(ls: ContextServer, params: p.ClearParams) -> p.ClearResult:
    return ls.session.route(params.workspace).clear(params.keep_pinned)


@handles(p.Requests.LIST)
def list_items(ls: ContextServer, params: p.ListParams) -> p.ListResult:
    return ls.session.route(params.workspace).list_items(params.kinds, params.limit)


@handles(p.Requests.RENDER)
def render(ls: ContextServer, params: p.RenderParams) -> p.RenderResult:
    return ls.session.route(params.workspace).render(
        params.format,
        params.kinds,
        params.limit,
        params.max_tokens,
        params.query,
        params.auto_retrieve,
    )


@handles(p.Requests.STATUS)
def status(ls: ContextServer, params: p.StatusParams) -> p.Status:
    workspace = ls.session.route(params.workspace)
    return msgspec.structs.replace(workspace.status(), semantic=workspace.semantic_status())


@handles(p.Requests.SEARCH)
def search(ls: ContextServer, params: p.SearchParams) -> p.SearchResult:
    return ls.session.route(params.workspace).search(
        params.query, params.limit, params.kinds, params.mode
    )


@handles(p.Requests.RESTORE)
def restore(ls: ContextServer, params: p.RestoreParams) -> p.RestoreResult:
    return ls.session.route(params.workspace).restore(params.ids, params.pin, params.dry_run)


@handles(p.Requests.COUNT_TOKENS)
def count_tokens(
    ls: ContextServer, params: p.CountTokensParams
) -> p.CountTokensResult | Awaitable[p.CountTokensResult]:
    workspace = None
    if params.targets:
        first = next((target.uri for target in params.targets if target.uri), None)
        workspace = ls.session.route(params.workspace, first)
    elif params.encoding is None and (params.workspace or ls.session.folders):
        # No workspace named: the only folder's window, counted in its model's tokens.
        try:
            workspace = ls.session.route(params.workspace)
        except ContextError:
            if params.workspace:
                raise
    count = functools.partial(
        count_for_models,
        ls.service.tokenizer,
        workspace,
        params.text,
        params.targets,
        params.models,
        params.encoding,
    )
    if params.targets or len(params.text) >= OFF_LOOP_CHARS:
        return asyncio.to_thread(count)
    return count()


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
    )


@handles(p.Requests.FORGET)
def forget(ls: ContextServer, params: p.ForgetParams) -> p.ForgetResult:
    return ls.session.route(params.workspace).forget(
        params.ids, params.query, params.dry_run, params.paths
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
    return ls.session.route(params.workspace).refresh(params.ids)


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
    tokenizer = workspace.tokenizer_after(wanted, params.reset)
    if tokenizer is not None and not params.dry_run:
        items = list(workspace.window)
        await asyncio.to_thread(precount, tokenizer, items)
        workspace = ls.session.route(params.workspace)  # as it is now
    return workspace.configure(wanted, params.reset, params.dry_run)


def _register_requests(server: ContextServer) -> None:
    for request, handle in HANDLERS.items():
        if asyncio.iscoroutinefunction(handle):
            _async_request(server, request, handle)
        else:
            _request(server, request, cast(Callable[[ContextServer, Any], msgspec.Struct], handle))
