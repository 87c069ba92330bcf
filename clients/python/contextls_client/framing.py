"""LSP base-protocol framing: ``Content-Length`` headers around JSON bodies."""

from __future__ import annotations

import asyncio

HEADER_ENCODING = "ascii"


class FramingError(Exception):
    """The peer sent bytes that are not a well-formed LSP message."""


async def read_message(reader: asyncio.StreamReader) -> bytes | None:
    """Read one message body; ``None`` at a clean end of stream.

    Headers other than ``Content-Length`` (``Content-Type``) are accepted and
    ignored, as the LSP specification allows.
    """
    content_length: int | None = None
    while True:
        line = await reader.readline()
        if not line:
            if content_length is None:
                return None
            raise FramingError("stream ended inside the message headers")
        header = line.decode(HEADER_ENCODING, errors="replace").strip()
        if not header:
            break
        name, _, value = header.partition(":")
        if name.strip().lower() == "content-length":
            try:
                content_length = int(value.strip())
            except ValueError as error:
                raise FramingError(f"bad Content-Length header: {header!r}") from error
    if content_length is None:
        raise FramingError("message without a Content-Length header")
    try:
        return await reader.readexactly(content_length)
    except asyncio.IncompleteReadError as error:
        raise FramingError("stream ended inside a message body") from error


def frame(body: bytes) -> bytes:
    """Prefix a JSON body with its ``Content-Length`` header."""
    return f"Content-Length: {len(body)}\r\n\r\n".encode(HEADER_ENCODING) + body
