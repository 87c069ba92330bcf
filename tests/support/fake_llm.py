"""A fake OpenAI-compatible chat-completions endpoint for tests.

It listens on 127.0.0.1 on an ephemeral port, in a background thread, records
every request, and answers as told: a summary (optionally with a
``usage.cost``), an HTTP error, a raw body, or a delay longer than the
client's timeout. Use it as a context manager::

    with FakeLLM() as llm:
        llm.reply("the summary", cost=0.25)
        settings = CondenseSettings(endpoint=llm.base_url, model="fake")
        ...
        assert llm.requests[0].body["model"] == "fake"

It is usable from a test process while the server under test runs in a
subprocess (the LSP end-to-end tests).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["FakeLLM", "RecordedRequest"]


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the fake endpoint saw it."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any
    """The decoded JSON body, or the raw text if it was not JSON."""


@dataclass
class _Behaviour:
    status: int = 200
    body: bytes = b""
    delay: float = 0.0
    location: str | None = None
    trickle: float = 0.0
    """Seconds between the body's bytes (a server that never quite stops answering)."""
    echo: bool = False
    """Put the request's headers into the body (as some proxies' error pages do)."""
    trickle_status: bool = False
    """Trickle the status line itself (``trickle`` seconds a byte), before any header."""


class FakeLLM:
    """The fake endpoint. ``start()``/``stop()``, or use it with ``with``."""

    def __init__(self) -> None:
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._behaviour = _Behaviour()
        self._requests: list[RecordedRequest] = []
        self._writing = 0
        self._answered = 0
        self.reply("A summary of the conversation.")

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> FakeLLM:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread."""
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True  # a sleeping handler must not block stop()
        self._server = server
        # A short poll interval keeps stop() (and so each test's teardown) quick.
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.02,), name="fake-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; wakes any handler sleeping in a delay."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- where it is -------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeLLM is not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, as one configures OpenAI clients."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def completions_url(self) -> str:
        return f"{self.base_url}/chat/completions"

    # -- what it does ------------------------------------------------------

    def reply(self, summary: str, *, cost: float | None = None, delay: float = 0.0) -> None:
        """Answer with a chat completion whose content is ``summary``."""
        usage: dict[str, Any] = {"prompt_tokens": 100, "completion_tokens": 10}
        if cost is not None:
            usage["cost"] = cost
        self.respond(200, _completion(summary, usage), delay=delay)

    def fail(self, status: int, message: str = "internal error") -> None:
        """Answer with an HTTP error and an OpenAI-style error body."""
        body = json.dumps({"error": {"message": message, "type": "server_error"}}).encode()
        self.respond(status, body)

    def redirect(self, status: int, location: str) -> None:
        """Answer with a redirect (3xx) to ``location``."""
        with self._lock:
            self._behaviour = _Behaviour(status, b"", location=location)

    def respond(self, status: int, body: bytes, *, delay: float = 0.0) -> None:
        """Answer with exactly ``body`` (any bytes), after ``delay`` seconds."""
        with self._lock:
            self._behaviour = _Behaviour(status, body, delay)

    def trickle(self, body: bytes, every: float) -> None:
        """Answer 200 with ``body``, one byte every ``every`` seconds."""
        with self._lock:
            self._behaviour = _Behaviour(200, body, trickle=every)

    def trickle_status_line(self, every: float) -> None:
        """Answer with a status line sent one byte every ``every`` seconds."""
        with self._lock:
            self._behaviour = _Behaviour(200, b"", trickle=every, trickle_status=True)

    def echo_headers(self, status: int) -> None:
        """Answer ``status`` with the request's headers in the body: an error page, or
        (200) a chat completion whose summary quotes them."""
        with self._lock:
            self._behaviour = _Behaviour(status, b"", echo=True)

    @property
    def answering(self) -> int:
        """Requests whose answer is still being written (trickling)."""
        with self._lock:
            return self._writing

    @property
    def answered(self) -> int:
        """Requests whose delay is over and whose answer has begun (a timeout test proves
        the client gave up before the endpoint answered)."""
        with self._lock:
            return self._answered

    @property
    def requests(self) -> list[RecordedRequest]:
        """Requests received so far (a copy)."""
        with self._lock:
            return list(self._requests)

    # -- called by the handler thread ------------------------------------------

    def _record(self, request: RecordedRequest) -> _Behaviour:
        with self._lock:
            self._requests.append(request)
            return self._behaviour

    def _sleep(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    def _began_answer(self) -> None:
        with self._lock:
            self._answered += 1

    def _writing_changed(self, by: int) -> None:
        with self._lock:
            self._writing += by


def _completion(summary: str, usage: dict[str, Any] | None = None) -> bytes:
    completion = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": summary},
                "finish_reason": "stop",
            }
        ],
        "usage": usage or {"prompt_tokens": 100, "completion_tokens": 10},
    }
    return json.dumps(completion).encode()


def _handler_for(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
            headers = {k.lower(): v for k, v in self.headers.items()}
            behaviour = fake._record(RecordedRequest("POST", self.path, headers, body))
            if behaviour.delay:
                fake._sleep(behaviour.delay)
            fake._began_answer()
            if behaviour.trickle_status:
                self._trickle(b"HTTP/1.1 200 OK\r\n", behaviour.trickle)
                return
            payload = behaviour.body
            if behaviour.echo:
                quoted = "\n".join(f"{k}: {v}" for k, v in self.headers.items())
                payload = (
                    _completion(f"You sent:\n{quoted}")
                    if behaviour.status == 200
                    else f"<html>bad request; you sent:\n{quoted}</html>".encode()
                )
            try:
                self.send_response(behaviour.status)
                if behaviour.location is not None:
                    self.send_header("Location", behaviour.location)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if behaviour.trickle:
                    self._trickle(payload, behaviour.trickle)
                else:
                    self.wfile.write(payload)
            except OSError:
                pass  # the client gave up (timeout test); nothing to tell it

        def _trickle(self, payload: bytes, every: float) -> None:
            fake._writing_changed(+1)
            try:
                for index in range(len(payload)):
                    self.wfile.write(payload[index : index + 1])
                    self.wfile.flush()
                    fake._sleep(every)
                    if fake._stopping.is_set():
                        return
            finally:
                fake._writing_changed(-1)

        def do_GET(self) -> None:  # what a client that follows a 303 would send
            headers = {k.lower(): v for k, v in self.headers.items()}
            fake._record(RecordedRequest("GET", self.path, headers, ""))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler
