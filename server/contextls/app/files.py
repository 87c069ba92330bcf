"""Reading marked files from disk, refusing what cannot be context."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Final
from urllib.parse import unquote_to_bytes, urlparse

from contextls.core.errors import ContextError, InvalidParams, cut
from contextls.protocol import ErrorCode
from contextls.storage.held_files import held_by_sqlite

_SNIFF_BYTES = 8192

FileSignature = tuple[int, int, int]
"""A file's (inode, size, mtime in ns) when it was read."""

RequestReads = dict[tuple[str, str | None], tuple[str, int, FileSignature]]

_request_reads: ContextVar[RequestReads | None] = ContextVar(
    "contextls_request_reads", default=None
)
"""The files the running request has read: (path, root) -> (text, size in bytes, signature)."""


@contextmanager
def one_read_per_file(reads: RequestReads | None = None) -> Iterator[RequestReads]:
    """Within it, each file is read from disk once: a later read (by another part of the
    same request, or a thread it started, which copies the context) is given the same
    text, so one request sees each file as it was at one moment. ``reads`` carries what
    one part of a request read into the part that finishes it later."""
    held: RequestReads = {} if reads is None else reads
    token = _request_reads.set(held)
    try:
        yield held
    finally:
        _request_reads.reset(token)


def uri_to_path(uri: str, field: str = "$.uri") -> Path:
    """``file:///a/b%20c.py`` -> ``/a/b c.py``; other schemes, hosts and relative paths
    are refused (a relative one would resolve against the server's working directory)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        if not parsed.scheme and uri.startswith("/"):
            return _checked(uri, uri, field)
        raise InvalidParams(field, f"{cut(uri)!r} is not a file:// URI")
    if parsed.netloc not in ("", "localhost"):
        raise InvalidParams(field, f"{cut(uri)!r} names a remote host")
    raw = unquote_to_bytes(parsed.path)
    try:
        path = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidParams(field, not_text_name(os.fsdecode(raw))) from None
    if not path.startswith("/"):
        raise InvalidParams(
            field, f"{cut(uri)!r} is a relative file URI; send file:///absolute/path"
        )
    return _checked(path, uri, field)


def is_text_name(name: str) -> bool:
    """Whether a file name read from the system is UTF-8 text (Python keeps the bytes
    that are not as lone surrogates, which no JSON answer can carry)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(name: str) -> str:
    """A file name as a message can show it: bytes that are not UTF-8 as ``\\xff``."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def not_text_name(name: str) -> str:
    return (
        f"the name of {cut(shown_name(name))} is not UTF-8 text, which contextls cannot keep "
        "or show; rename the file to add it"
    )


def _checked(path: str, uri: str, field: str) -> Path:
    if "\0" in path:
        raise InvalidParams(field, f"{cut(uri)!r} holds a NUL character; paths cannot")
    check_path_limits(path, field)
    return Path(path)


def _limit(name: str, fallback: int) -> int:
    try:
        return int(os.pathconf("/", name))
    except (OSError, ValueError):
        return fallback


PATH_MAX: Final = _limit("PC_PATH_MAX", 4096)
"""Bytes in a path, the terminating NUL included, on this system (4,096 on Linux)."""
NAME_MAX: Final = _limit("PC_NAME_MAX", 255)
"""Bytes in one name of a path."""


def check_path_limits(path: str, field: str) -> None:
    """Refuse (``InvalidParams`` naming ``field``) a path the system could not open anyway."""
    problem = path_problem(path)
    if problem is not None:
        raise InvalidParams(field, problem)


def path_problem(path: str) -> str | None:
    """Why the system could not open ``path``, said before anything costs time on it:
    resolving a path is quadratic in its parts, and the server answers one request at a
    time (a 600 KB path took 30 s, and every other client waited). A lone surrogate (from
    JSON) is no name at all."""
    try:
        encoded = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return f"{cut(path)!r} holds a character that is not Unicode text (a lone surrogate)"
    if len(encoded) >= PATH_MAX:
        return f"the path is {len(encoded):,} bytes long; paths here end at {PATH_MAX - 1:,}"
    longest = max(encoded.split(b"/"), key=len)
    if len(longest) > NAME_MAX:
        return f"a name in the path is {len(longest):,} bytes long; names here end at {NAME_MAX:,}"
    return None


def resolve(path: Path, label: str | None = None) -> Path:
    """``path`` with symlinks resolved; a symlink loop is a clear refusal."""
    problem = path_problem(str(path))
    if problem is not None:
        raise ContextError(f"{label or cut(str(path))} cannot be opened: {problem}")
    try:
        return path.resolve()
    except (RuntimeError, OSError):  # Python 3.11 raises RuntimeError for a loop
        raise ContextError(
            f"{label or path} cannot be resolved: a symbolic link loop, or a link that "
            "cannot be followed",
            ErrorCode.FILE_NOT_FOUND,
        ) from None


def check_text(data: bytes, label: str) -> str:
    """Decode file bytes as UTF-8 text, refusing binary content."""
    if b"\0" in data[:_SNIFF_BYTES]:
        raise ContextError(f"{label} is binary", ErrorCode.BINARY_FILE)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ContextError(f"{label} is binary or not UTF-8 text", ErrorCode.BINARY_FILE) from None


def read_text_file(path: Path, label: str, max_bytes: int, root: Path | None = None) -> str:
    """The text of a regular file on disk, or a clear refusal.

    Missing files, directories, FIFOs, devices and sockets are refused
    without blocking: the file is opened with O_NONBLOCK (a FIFO with no
    writer would otherwise wait forever) and checked with ``fstat`` before
    anything is read, and at most ``max_bytes + 1`` bytes are read (a device
    such as /dev/zero never ends).

    With ``root``, what was opened must lie inside it: the path is opened once
    and the kernel is asked where the open file really is (a symlink, or a folder
    swapped for one between a check and the read, cannot lead outside).
    """
    reads = _request_reads.get()
    key = (str(path), None if root is None else str(root))
    if reads is not None and key in reads:
        text, size, _ = reads[key]
        check_size(size, label, max_bytes)
        return text
    text, size, signature = _read_text_file(path, label, max_bytes, root)
    if reads is not None:
        reads[key] = (text, size, signature)
    return text


def read_in_this_request(path: Path) -> FileSignature | None:
    """The signature ``path`` had when the running request read it, if it did."""
    reads = _request_reads.get()
    if reads is None:
        return None
    found = [signature for (read, _), (_, _, signature) in reads.items() if read == str(path)]
    return found[0] if found else None


def _read_text_file(
    path: Path, label: str, max_bytes: int, root: Path | None
) -> tuple[str, int, FileSignature]:
    if held_by_sqlite(path):
        raise ContextError(
            f"{label} is the context database itself (or its journal); it is not context",
            ErrorCode.BINARY_FILE,
        )
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ContextError(f"{label} does not exist", ErrorCode.FILE_NOT_FOUND) from None
    except IsADirectoryError:
        raise _directory(label) from None
    except OSError as error:
        raise ContextError(
            f"{label} cannot be read: {error.strerror}", ErrorCode.FILE_NOT_FOUND
        ) from None
    try:
        if root is not None:
            confine(fd, root, label)
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _directory(label)
        if not stat.S_ISREG(info.st_mode):
            raise ContextError(
                f"{label} is {_kind_of(info.st_mode)}, not a regular file",
                ErrorCode.FILE_NOT_FOUND,
            )
        check_size(info.st_size, label, max_bytes)
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(max_bytes + 1)
    except OSError as error:
        raise ContextError(
            f"{label} cannot be read: {error.strerror}", ErrorCode.FILE_NOT_FOUND
        ) from None
    finally:
        os.close(fd)
    check_size(len(data), label, max_bytes)
    return check_text(data, label), len(data), (info.st_ino, info.st_size, info.st_mtime_ns)


class Outside(ContextError):
    code = ErrorCode.OUTSIDE_WORKSPACE


def confine(fd: int, root: Path, label: str) -> None:
    """Refuse (OUTSIDE_WORKSPACE) unless the open file ``fd`` lies inside ``root``."""
    where = opened_path(fd)
    if where is None:
        return  # no way to ask (no /proc): the caller resolved the path just before
    if not where.is_relative_to(root):
        raise Outside(f"{label} leads outside the workspace folder {root} (to {where})")


def opened_path(fd: int) -> Path | None:
    """Where an open file really is: the kernel's own answer, symlinks resolved."""
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        import fcntl

        get_path = getattr(fcntl, "F_GETPATH", None)  # macOS and the BSDs
        if get_path is None:
            return None
        raw = fcntl.fcntl(fd, get_path, b"\0" * 1024)
        target = os.fsdecode(raw.split(b"\0", 1)[0])
    return Path(target.removesuffix(" (deleted)"))


def _directory(label: str) -> ContextError:
    return ContextError(
        f"{label} is a directory; add its files one by one", ErrorCode.FILE_NOT_FOUND
    )


def _kind_of(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def check_size(size: int, label: str, max_bytes: int) -> None:
    if size > max_bytes:
        raise ContextError(
            f"{label} is {size:,} bytes; the limit is {max_bytes:,} (setting maxFileBytes)",
            ErrorCode.FILE_TOO_LARGE,
        )
