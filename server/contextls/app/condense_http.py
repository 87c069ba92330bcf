"""The condensing request on the wire: one POST, bounded as a whole, and nothing of the key
in what comes back.

It runs in a worker thread. A socket timeout bounds each blocking step only: a server
that sends one byte every 0.3 s never trips it, and reading a 64 KiB answer that way
takes hours, holding a thread of the executor every later condense needs. So a
watchdog shuts the request's socket down at the deadline, which ends whatever read
is blocked on it, and the thread returns with the timeout. Reads take what has arrived
(``read1``) rather than waiting for a full chunk.

An endpoint may echo the request, headers included, into its error page or its answer:
the configured key is cut out of everything derived from a response.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import http.client
    import urllib.error
    import urllib.request

MAX_RESPONSE_BYTES: Final = 8 * 1024 * 1024
"""A summary is a few KB; refuse to buffer a runaway answer."""
READ_CHUNK: Final = 64 * 1024
ERROR_SNIPPET: Final = 300
REDACTED: Final = "[redacted]"


class CondenseError(Exception):
    """A failure with a message meant for the user."""


def redact(text: str, secret: str | None) -> str:
    """``text`` without ``secret`` (the configured API key) anywhere in it."""
    if not secret:
        return text
    return text.replace(secret, REDACTED)


def timeout_message(timeout: float) -> str:
    return (
        f"the condensing endpoint did not answer within {timeout:g}s (contextls.condense.timeout)"
    )


class Deadline:
    """Shuts down every socket the request opened once ``timeout`` seconds have passed."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(timeout, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def post(url: str, api_key: str | None, data: bytes, timeout: float) -> bytes:
    """POST ``data`` (JSON) to ``url`` and read the answer, within ``timeout`` seconds in
    all; raises ``CondenseError`` with a message a person can act on."""
    # Imported here: urllib.request brings http.client, ~23 ms of every server's start
    # (and of a person's first command), for a request few sessions ever send.
    import http.client
    import urllib.error
    import urllib.request

    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    with Deadline(timeout) as deadline:
        try:
            with _opener(deadline.watch).open(request, timeout=timeout) as response:
                return _read_all(response, deadline)
        except urllib.error.HTTPError as exc:
            if 300 <= exc.code < 400:
                where = exc.headers.get("Location", "elsewhere") if exc.headers else "elsewhere"
                raise CondenseError(
                    f"the condensing endpoint answered HTTP {exc.code} (a redirect to "
                    f"{redact(str(where), api_key)[:200]}), which contextls does not follow: the "
                    "API key goes to the endpoint of the settings and nowhere else (set "
                    "contextls.condense.endpoint to the address it redirects to, if you trust it)"
                ) from exc
            raise CondenseError(redact(_http_error_message(exc), api_key)) from exc
        except CondenseError:
            raise
        except http.client.HTTPException as exc:  # BadStatusLine: cut off mid-line, or not HTTP
            if deadline.expired:
                raise CondenseError(timeout_message(timeout)) from exc
            raise CondenseError(
                f"the condensing endpoint {url} did not answer in HTTP ({type(exc).__name__})"
            ) from exc
        except (TimeoutError, urllib.error.URLError, OSError, ValueError) as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            if deadline.expired or isinstance(reason, TimeoutError):
                raise CondenseError(timeout_message(timeout)) from exc
            if isinstance(exc, urllib.error.URLError):
                raise CondenseError(
                    f"could not reach the condensing endpoint {url}: {exc.reason}"
                ) from exc
            raise CondenseError(f"the condensing request to {url} failed: {exc}") from exc


def _read_all(response: http.client.HTTPResponse, deadline: Deadline) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := response.read1(READ_CHUNK):
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise CondenseError(
                f"the condensing endpoint's answer is larger than {MAX_RESPONSE_BYTES} bytes"
            )
        chunks.append(chunk)
    if deadline.expired:  # a socket shut down mid-answer reads as its end
        raise CondenseError(timeout_message(deadline.timeout))
    return b"".join(chunks)


def _opener(watch: Callable[[socket.socket], None]) -> urllib.request.OpenerDirector:
    """An opener whose connections hand their socket to ``watch`` as soon as they connect,
    and that follows no redirect: every 3xx is an answer, not a place to go, as following
    one would send the request, with its ``Authorization`` header, to a host the settings
    never named."""
    import http.client
    import urllib.request

    class WatchedHTTP(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            watch(self.sock)

    class WatchedHTTPS(http.client.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            watch(self.sock)

    class HTTP(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(WatchedHTTP, req)

    class HTTPS(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(WatchedHTTPS, req, context=getattr(self, "_context", None))

    class NoRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(HTTP, HTTPS, NoRedirects)


def _http_error_message(exc: urllib.error.HTTPError) -> str:
    try:
        detail = exc.read(ERROR_SNIPPET * 4).decode("utf-8", "replace").strip()
    except Exception:  # the body is only a hint; the status is the news
        detail = ""
    message = f"the condensing endpoint answered HTTP {exc.code} {exc.reason}"
    return f"{message}: {detail[:ERROR_SNIPPET]}" if detail else message
