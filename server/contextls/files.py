"""Reading marked files from disk, refusing what cannot be context."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, unquote, urlparse

from contextls.core.errors import ContextError, InvalidParams
from contextls.protocol import ErrorCode

_SNIFF_BYTES = 8192


def uri_to_path(uri: str, field: str = "$.uri") -> Path:
    """``file:///a/b%20c.py`` -> ``/a/b c.py``; other schemes are refused."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        if not parsed.scheme and uri.startswith("/"):
            return Path(uri)
        raise InvalidParams(field, f"{uri!r} is not a file:// URI")
    if parsed.netloc not in ("", "localhost"):
        raise InvalidParams(field, f"{uri!r} names a remote host")
    return Path(unquote(parsed.path))


def path_to_uri(path: Path) -> str:
    return "file://" + quote(path.as_posix(), safe="/:@!$&'()*+,;=-._~")


def check_text(data: bytes, label: str) -> str:
    """Decode file bytes as UTF-8 text, refusing binary content."""
    if b"\0" in data[:_SNIFF_BYTES]:
        raise ContextError(f"{label} is binary", ErrorCode.BINARY_FILE)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ContextError(f"{label} is binary or not UTF-8 text", ErrorCode.BINARY_FILE) from None


def read_text_file(path: Path, label: str, max_bytes: int) -> str:
    """The text of a file on disk, or a clear refusal (missing, directory, big, binary)."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise ContextError(f"{label} does not exist", ErrorCode.FILE_NOT_FOUND) from None
    except OSError as error:
        raise ContextError(
            f"{label} cannot be read: {error.strerror}", ErrorCode.FILE_NOT_FOUND
        ) from None
    if path.is_dir():
        raise ContextError(
            f"{label} is a directory; add its files one by one", ErrorCode.FILE_NOT_FOUND
        )
    check_size(stat.st_size, label, max_bytes)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ContextError(
            f"{label} cannot be read: {error.strerror}", ErrorCode.FILE_NOT_FOUND
        ) from None
    check_size(len(data), label, max_bytes)
    return check_text(data, label)


def check_size(size: int, label: str, max_bytes: int) -> None:
    if size > max_bytes:
        raise ContextError(
            f"{label} is {size:,} bytes; the limit is {max_bytes:,} (setting maxFileBytes)",
            ErrorCode.FILE_TOO_LARGE,
        )
