"""From one frame body to a handler: our requests directly, the rest through pygls.

Measured here, pygls' ``handle_message`` route costs a custom request more
than the work behind it: a future and a done-callback per request, cattrs
unstructuring a result that is already made of builtins, ``json.dumps``. So
every ``contextls/*`` request is answered here: params as the decoded dict, the
result (a msgspec Struct) encoded by msgspec straight into the outbox. A handler
that works off the event loop (a map, an outline, a count of a large text) returns
an awaitable: it runs as a task, other requests are answered meanwhile, and its
answer leaves when it is done (after the commit of what it changed). Such a task
ends with a -32800 error when the client cancels it (``$/cancelRequest``) or goes
away. Everything else (the LSP lifecycle, document sync, workspace events,
responses to our own requests) goes to pygls' ``structure_message``/
``handle_message``, typed by lsprotocol.

Unlike pygls' loop the dispatcher also answers what it cannot read: a body
that is not JSON gets -32700, a request that is not a JSON-RPC object -32600,
and a standard request whose params do not fit their lsprotocol type -32602
naming the field, instead of being dropped without a reply.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import cattrs
import msgspec
from lsprotocol.types import METHOD_TO_TYPES, ErrorCodes, LSPErrorCodes
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol

from contextls.common.surrogates import LONE_SURROGATE, lone_surrogate, with_lone_surrogate
from contextls.lsp.outbox import Outbox
from contextls.protocol import NOTIFICATIONS, InvalidParamsData

NOTIFICATION_METHODS = frozenset(
    [*(method for method, types in METHOD_TO_TYPES.items() if types[1] is None), *NOTIFICATIONS]
)
"""Methods that are notifications (LSP's and ours): they take no id and get no answer."""

log = logging.getLogger(__name__)

DirectHandler = Callable[[Any], Any]
"""Raw params in, a msgspec-encodable result (or an awaitable of one) out; failures
raise JsonRpcException."""

INVALID_REQUEST = int(ErrorCodes.InvalidRequest)
INTERNAL_ERROR = int(ErrorCodes.InternalError)
PARSE_ERROR = int(ErrorCodes.ParseError)
INVALID_PARAMS = int(ErrorCodes.InvalidParams)
REQUEST_CANCELLED = int(LSPErrorCodes.RequestCancelled)
CANCEL = "$/cancelRequest"
_SYSTEM_EXITS = (KeyboardInterrupt, SystemExit, GeneratorExit, asyncio.CancelledError)
"""BaseExceptions that mean the process or the task ends; any other (a native library's
panic, ``pyo3_runtime.PanicException``) becomes an error answer."""


class Dispatcher:
    def __init__(
        self,
        protocol: JsonRPCProtocol,
        outbox: Outbox,
        direct: Mapping[str, DirectHandler],
        shutting_down: Callable[[], bool],
        uncommitted: Callable[[], bool],
    ) -> None:
        self.protocol = protocol
        self.outbox = outbox
        self.direct = direct
        self.shutting_down = shutting_down
        self.uncommitted = uncommitted
        """Counts changes; an answer given while it grew waits for their commit."""
        self._decoder = msgspec.json.Decoder()
        self._initialized = False
        self.running: dict[int | str, asyncio.Task[None]] = {}
        """Requests answered by a task, by id: what ``$/cancelRequest`` can stop."""

    def _refuse_undecodable(self, body: bytes, error: Exception) -> None:
        """One answer to a message the decoder refused: where it holds a lone surrogate,
        naming that field; else a parse error."""
        surrogate = _with_lone_surrogate(body)
        if surrogate is not None:
            self.outbox.error(*surrogate)
        else:
            self.outbox.error(_id_in(body), PARSE_ERROR, _parse_problem(error))

    def __call__(self, body: bytes) -> None:
        try:
            data = self._decoder.decode(body)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError, ValueError) as error:
            self._refuse_undecodable(body, error)
            return
        if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
            msg_id = data.get("id") if isinstance(data, dict) else None
            self.outbox.error(
                _valid_id(msg_id),
                INVALID_REQUEST,
                "invalid request: expected a JSON-RPC 2.0 object",
            )
            return
        method = data.get("method")
        if ("method" in data and not isinstance(method, str)) or (
            "method" not in data and "result" not in data and "error" not in data
        ):
            self.outbox.error(
                _valid_id(data.get("id")),
                INVALID_REQUEST,
                "invalid request: method must be a string",
            )
            return
        is_request = "id" in data and method is not None
        if method == CANCEL and not is_request and self._cancel(data.get("params")):
            return
        if is_request:
            msg_id = data["id"]
            if _valid_id(msg_id) is None:
                self.outbox.error(
                    None, INVALID_REQUEST, "invalid request: id must be an integer or a string"
                )
                return
            if method in NOTIFICATION_METHODS:
                # A notification sent with an id still gets its one answer (pygls would
                # handle it as a notification and leave the client waiting).
                self.outbox.error(
                    msg_id,
                    INVALID_REQUEST,
                    f"invalid request: {method} is a notification; send it without an id",
                )
                return
            if self.shutting_down():
                # LSP: requests after `shutdown` are answered with InvalidRequest
                # (pygls would drop them without a reply).
                self.outbox.error(msg_id, INVALID_REQUEST, "the server is shutting down")
                return
            if method == "initialize":
                if self._initialized:
                    self.outbox.error(
                        msg_id, INVALID_REQUEST, "initialize was already sent; LSP allows it once"
                    )
                    return
                self._initialized = True
            problem = too_deep(data.get("params"))
            if problem is not None:
                self.outbox.error(msg_id, INVALID_PARAMS, f"invalid params: {problem}")
                return
            handle = self.direct.get(method)  # type: ignore[arg-type]
            if handle is not None:
                self._answer(msg_id, handle, data.get("params"))
                return
        self._through_pygls(data, method, is_request)

    def _answer(self, msg_id: Any, handle: DirectHandler, params: Any) -> None:
        try:
            result = handle(params)
            if inspect.isawaitable(result):
                self._start(msg_id, result)
                return
            self.outbox.respond(msg_id, result, waits_for_commit=self.uncommitted())
        except JsonRpcException as error:
            self.outbox.error(msg_id, error.code, error.message, error.data)
        except _SYSTEM_EXITS:
            raise
        except BaseException as error:  # the handlers map every error; this is a last resort
            self._failed(msg_id, error)

    def _start(self, msg_id: int | str, work: Awaitable[Any]) -> None:
        if msg_id in self.running:
            _drop(work)
            self.outbox.error(
                msg_id, INVALID_REQUEST, f"invalid request: request {msg_id!r} is still running"
            )
            return
        task = asyncio.ensure_future(self._finish(msg_id, work))
        self.running[msg_id] = task
        task.add_done_callback(lambda done: self._cancelled_early(msg_id, done, work))

    def _cancelled_early(
        self, msg_id: int | str, task: asyncio.Task[None], work: Awaitable[Any]
    ) -> None:
        """A task cancelled before it ran a step (a cancel right behind its request, in
        the same read) never enters ``_finish``: its one answer is given here."""
        if task.cancelled() and self.running.get(msg_id) is task:
            del self.running[msg_id]
            _drop(work)
            self.outbox.error(
                msg_id, REQUEST_CANCELLED, "the request was cancelled: the client cancelled it"
            )

    async def _finish(self, msg_id: int | str, work: Awaitable[Any]) -> None:
        try:
            result = await work
        except JsonRpcException as error:
            self.outbox.error(msg_id, error.code, error.message, error.data)
        except asyncio.CancelledError as cancelled:
            why = cancelled.args[0] if cancelled.args else "the client cancelled it"
            self.outbox.error(msg_id, REQUEST_CANCELLED, f"the request was cancelled: {why}")
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as error:
            self._failed(msg_id, error)
        else:
            self.outbox.respond(msg_id, result, waits_for_commit=self.uncommitted())
        finally:
            self.running.pop(msg_id, None)

    def _failed(self, msg_id: Any, error: BaseException) -> None:
        log.error("request %r failed", msg_id, exc_info=error)
        self.outbox.error(msg_id, INTERNAL_ERROR, f"internal error: {type(error).__name__}")

    def _cancel(self, params: Any) -> bool:
        """Stop the task answering ``params.id``; False when no task of ours has it
        (pygls' own requests, or one already answered)."""
        msg_id = params.get("id") if isinstance(params, dict) else None
        task = self.running.get(msg_id) if isinstance(msg_id, int | str) else None
        if task is None:
            return False
        task.cancel()
        return True

    def cancel_all(self) -> None:
        """The client went away: nobody waits for what its tasks would answer."""
        for task in list(self.running.values()):
            task.cancel()

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


def _drop(work: Awaitable[Any]) -> None:
    """Close a handler's coroutine that will never run, and the awaitable it was
    handed (a worker thread's, say), so nothing is left pending or warned about."""
    frame = getattr(work, "cr_frame", None)
    inner = frame.f_locals.get("work") if frame is not None else None
    for awaitable in (inner, work):
        close = getattr(awaitable, "close", None)
        if close is not None:
            close()


def _describe(method: Any, error: Exception) -> str:
    cause = error.__cause__
    if isinstance(cause, cattrs.BaseValidationError):
        details = "; ".join(cattrs.transform_error(cause, path="$"))
        return f"invalid params for {method}: {details}"
    return f"invalid message for {method}: {cause or error}"


MAX_DEPTH = 32
"""How deeply params may nest: free-form values (metadata, messages, settings) are
stored and searched later, so a value too deep to read back must be refused up front."""

_ID = re.compile(rb'"id"\s*:\s*(-?[0-9]{1,15}(?![0-9.eE])|"(?:[^"\\]|\\.){0,200}")')


def too_deep(value: Any, limit: int = MAX_DEPTH) -> str | None:
    """Where ``value`` nests deeper than ``limit`` (a JSON path), or None.

    It walks containers only, and builds no path unless one is too deep: a 100,000-item
    import held every other client for ~0.5-1.3 s while a path string was made for each
    of its values."""
    containers = (dict, list)
    if type(value) not in containers:
        return None
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if type(item) is dict else item
        if depth >= limit:
            return f"`{_path_at(value, limit)}` nests deeper than {limit} levels"
        stack.extend((child, depth + 1) for child in children if type(child) in containers)
    return None


def _path_at(value: Any, depth: int, path: str = "$") -> str:
    """The JSON path of the first container ``depth`` levels down in ``value``."""
    if depth == 0:
        return path
    entries = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in entries:
        if isinstance(child, dict | list):
            inner = f"{path}.{key}" if isinstance(value, dict) else f"{path}[{key}]"
            found = _path_at(child, depth - 1, inner)
            if found:
                return found
    return ""


MAX_ID = 2**53 - 1
"""Integer ids beyond this cannot round-trip through a JavaScript client."""


def _valid_id(msg_id: Any) -> int | str | None:
    """A JSON-RPC id we can answer with: an integer or a string (not a bool or a float)."""
    if isinstance(msg_id, str):
        return msg_id
    if isinstance(msg_id, bool) or not isinstance(msg_id, int) or abs(msg_id) > MAX_ID:
        return None
    return msg_id


def _id_in(body: bytes) -> int | str | None:
    """The id of a message that cannot be decoded, when it can still be made out."""
    found = _ID.search(body)
    if found is None:
        return None
    try:
        return _valid_id(msgspec.json.decode(found.group(1).decode("utf-8", "replace")))
    except (msgspec.DecodeError, ValueError):
        return None


def _with_lone_surrogate(body: bytes) -> tuple[int | str | None, int, str, Any] | None:
    """The answer to a message that is JSON but holds a lone surrogate (msgspec refuses
    it as truncated input): its id when it has a usable one, the code (a param's: invalid
    params; the id's or the method's: invalid request), the words, and the field."""
    found = with_lone_surrogate(body)
    if found is None:
        return None
    message, where = found
    msg_id = message.get("id") if isinstance(message, dict) else None
    usable = _valid_id(msg_id) if lone_surrogate(msg_id) is None else None
    if where.startswith("$.params"):  # named within the params, as every param's error is
        field = "$" + where.removeprefix("$.params")
        said = f"invalid params: `{field}` {LONE_SURROGATE}"
        code = INVALID_PARAMS
    else:
        field, said, code = where, f"invalid request: `{where}` {LONE_SURROGATE}", INVALID_REQUEST
    data = msgspec.to_builtins(InvalidParamsData(field=field, rule="invalid"))
    return usable, code, said, data


def _parse_problem(error: Exception) -> str:
    if isinstance(error, UnicodeDecodeError):
        return "parse error: the message is not valid UTF-8"
    if isinstance(error, RecursionError):
        return "parse error: the message nests too deeply"
    return f"parse error: {error}"
