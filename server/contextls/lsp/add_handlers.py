"""Handlers of the requests that read and count texts and files: the adds and
``countTokens``. A large text or file is read, parsed and counted in a worker thread
(the handler hands the dispatcher an awaitable); the change runs on the loop."""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Awaitable
from typing import Final

from lsprotocol import types as lsp

from contextls import protocol as p
from contextls.app import bulk
from contextls.app.files import uri_to_path
from contextls.app.model_counts import count_for_models
from contextls.app.workers import OverBudget
from contextls.core import candidates
from contextls.core.candidates import Candidate
from contextls.core.costs import OFF_LOOP_CHARS
from contextls.core.errors import ContextError
from contextls.core.outlines import outline_source
from contextls.lsp.agents import refuse_secrets_to_agents
from contextls.lsp.progress import Reporter
from contextls.lsp.registry import handles
from contextls.lsp.server import ContextServer


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
    return workspace.adding.add_region(
        params.uri, start, end, params.text, params.language, params.metadata, params.pin
    )


@handles(p.Requests.ADD_SYMBOL)
def add_symbol(ls: ContextServer, params: p.AddSymbolParams) -> p.AddResult:
    start, end = _start_end(params.range)
    workspace = ls.session.route(params.workspace, params.uri)
    return workspace.symbols.add_editor_symbol(
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


@handles(p.Requests.ADD_FILE)
def add_file(ls: ContextServer, params: p.AddFileParams) -> p.AddResult | Awaitable[p.AddResult]:
    refuse_secrets_to_agents(ls.session.client, params.uri)
    workspace = ls.session.route(params.workspace, params.uri)
    if params.outline or _large_file(params.uri):
        return _add_file_off_loop(ls, params)
    return workspace.adding.add_file(params.uri, params.language, params.metadata, params.pin)


async def _add_file_off_loop(ls: ContextServer, params: p.AddFileParams) -> p.AddResult:
    workspace = ls.session.route(params.workspace, params.uri)
    candidate = await asyncio.to_thread(
        workspace.adding.file_candidate, params.uri, params.language, params.metadata, params.pin
    )
    if params.outline:
        shown = await _outline(ls, candidate)
        candidate = await asyncio.to_thread(workspace.views.outlined_as, candidate, shown)
    await asyncio.to_thread(workspace.adding.precount, candidate)
    return ls.session.route(params.workspace, params.uri).adding.add_candidate(candidate)


async def _outline(ls: ContextServer, candidate: Candidate) -> str | None:
    """The outline of a file to add. Tree-sitter's parse and query hold the GIL (0.25 s
    and 0.13 s of a 900 KB file), so a large file is outlined in a worker process, where
    it stalls no other client's answer; a small one in a thread (a worker's start would
    cost more than it saves)."""
    job = (candidate.content, candidate.kind, dict(candidate.metadata))
    if len(candidate.content) < OUTLINE_IN_WORKER_CHARS:
        return await asyncio.to_thread(outline_source, *job)
    budget = OUTLINE_BUDGET_SECONDS + OUTLINE_BUDGET_PER_MB * len(candidate.content) / 1e6
    try:
        return await ls.service.workers.run(budget, outline_source, *job)
    except OverBudget as error:
        raise ContextError(
            f"{candidate.metadata.get('path') or 'the file'} could not be outlined: {error}",
            p.ErrorCode.NO_STRUCTURE,
        ) from None


OUTLINE_IN_WORKER_CHARS: Final = 256 * 1024
OUTLINE_BUDGET_SECONDS: Final = 30.0
OUTLINE_BUDGET_PER_MB: Final = 30.0


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
    progress = Reporter(ls.outbox, params.work_done_token, "Reading the files to add")
    try:
        plan = await asyncio.to_thread(bulk.read_plan, workspace, params, progress.report)
    finally:
        progress.end("read")
    return bulk.add_files(ls.session.route(params.workspace, first), params, plan)


@handles(p.Requests.ADD_TEXT)
def add_text(ls: ContextServer, params: p.AddTextParams) -> p.AddResult | Awaitable[p.AddResult]:
    workspace = ls.session.route(params.workspace)
    if len(params.content) >= OFF_LOOP_CHARS:
        return _add_text_off_loop(ls, params)
    return workspace.adding.add_text(
        params.kind, params.content, params.language, params.metadata, params.pin
    )


async def _add_text_off_loop(ls: ContextServer, params: p.AddTextParams) -> p.AddResult:
    workspace = ls.session.route(params.workspace)
    candidate = candidates.text(
        params.kind, params.content, params.language, params.metadata, params.pin
    )
    await asyncio.to_thread(workspace.adding.precount, candidate)
    return ls.session.route(params.workspace).adding.add_text(
        params.kind, params.content, params.language, params.metadata, params.pin
    )


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
    # Another model than the window's may need its tokenizer loaded (~0.1-0.2 s, much of
    # it holding the GIL): in a thread, the loop answers others between its Python parts.
    if params.targets or params.models or params.encoding or len(params.text) >= OFF_LOOP_CHARS:
        return asyncio.to_thread(count)
    return count()
