"""LSP base-protocol framing, once: ``Content-Length`` headers around JSON bodies.

``FrameParser`` is push-based: bytes go in as they arrive, in chunks of any
size, and every complete body comes out through a callback in the same call
(the server's transport answers a whole read in one loop turn with it). It
scans each byte once and keeps no header line longer than
``MAX_HEADER_LINE``, so a peer cannot make it slow or big. ``MessageReader``
pulls bodies from a blocking or an asyncio stream through the same parser,
for clients and tests. Pure: stdlib only, no pygls, no lsprotocol.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:  # asyncio takes ~30 ms to import; the CLI's daemon path never needs it
    import asyncio

MAX_BODY_BYTES: Final = 256 * 1024 * 1024
MAX_HEADER_LINE: Final = 8 * 1024
"""A header line longer than this is refused (and skipped to its end) without being kept."""
READ_CHUNK: Final = 64 * 1024


class FramingError(ValueError):
    """The peer sent bytes that are not a well-formed LSP message."""


def frame(body: bytes) -> bytes:
    """Prefix a JSON body with its ``Content-Length`` header."""
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


class FrameParser:
    """Content-Length frames out of a byte stream that arrives in chunks of any size."""

    def __init__(self, on_body: Callable[[bytes], None], on_error: Callable[[str], None]) -> None:
        """``on_body`` gets each complete body; ``on_error`` a problem that skipped input."""
        self._on_body = on_body
        self._on_error = on_error
        self._buffer = bytearray()
        self._length: int | None = None
        """Of the body being read; None while reading headers."""
        self._header_length: int | None = None
        self._header_bad = False
        self._scanned = 0
        """How much of the buffer is known to hold no newline (each byte is scanned once)."""
        self._skipping = False
        """Dropping an over-long header line until its newline."""

    @property
    def inside_a_message(self) -> bool:
        """True when the input so far ends inside a frame's body."""
        return self._length is not None

    @property
    def buffered(self) -> int:
        """Bytes kept, waiting for the rest of their frame."""
        return len(self._buffer)

    def feed(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        start = 0
        try:
            while True:
                length = self._length
                if length is None:
                    end = buffer.find(b"\n", max(start, self._scanned))
                    if end < 0:
                        self._scanned = len(buffer)
                        if len(buffer) - start > MAX_HEADER_LINE:
                            self._refuse_long_header()
                            start = self._scanned = len(buffer)
                        break
                    self._scanned = 0
                    line = bytes(buffer[start : end + 1])
                    start = end + 1
                    if self._skipping:
                        self._skipping = False  # the end of the over-long line
                    elif len(line) > MAX_HEADER_LINE:
                        self._refuse_long_header()
                        self._skipping = False
                    else:
                        self._header_line(line)
                    continue
                if len(buffer) - start < length:
                    break
                body = bytes(buffer[start : start + length])
                start += length
                self._length = None
                self._on_body(body)
        finally:
            del buffer[:start]
            self._scanned = max(0, self._scanned - start)

    def _refuse_long_header(self) -> None:
        """Say so once, and drop the line up to its newline (the frame it began is lost)."""
        if not self._skipping:
            self._skipping = True
            self._header_length, self._header_bad = None, False
            self._on_error(
                f"a header line longer than {MAX_HEADER_LINE:,} bytes; skipped to its end"
            )

    def _header_line(self, line: bytes) -> None:
        if line not in (b"\r\n", b"\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                try:
                    self._header_length = int(value.strip())
                    self._header_bad = False
                except ValueError:
                    self._header_bad = True
            return
        length, self._header_length = self._header_length, None
        bad, self._header_bad = self._header_bad, False
        if bad or length is None or not 0 <= length <= MAX_BODY_BYTES:
            self._on_error("missing or bad Content-Length")
            return
        self._length = length


class BlockingStream(Protocol):
    def read1(self, size: int = ..., /) -> bytes: ...


class MessageReader:
    """Whole bodies, one at a time, from a stream read in chunks (through ``FrameParser``)."""

    def __init__(self) -> None:
        self._bodies: deque[bytes] = deque()
        self._errors: deque[str] = deque()
        self._parser = FrameParser(self._bodies.append, self._errors.append)

    def _next(self) -> bytes | None:
        if self._errors:
            raise FramingError(self._errors.popleft())
        return self._bodies.popleft() if self._bodies else None

    def _end(self) -> None:
        if self._parser.inside_a_message or self._parser.buffered:
            raise FramingError("the stream ended inside a message")

    def read(self, stream: BlockingStream) -> bytes | None:
        """The next body of a blocking stream; None at its clean end."""
        while (body := self._next()) is None:
            chunk = stream.read1(READ_CHUNK)
            if not chunk:
                self._end()
                return None
            self._parser.feed(chunk)
        return body

    async def read_async(self, stream: asyncio.StreamReader) -> bytes | None:
        """The next body of an asyncio stream; None at its clean end."""
        while (body := self._next()) is None:
            chunk = await stream.read(READ_CHUNK)
            if not chunk:
                self._end()
                return None
            self._parser.feed(chunk)
        return body
