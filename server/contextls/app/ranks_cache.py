"""A tokenizer's parsed ranks kept between daemon starts, so a daemon's first count does
not decode its vocabulary again.

Decoding o200k's 200,000 base64 lines (and gunzipping them) is ~90 ms of a person's first
command, which waits for the daemon to start; ``marshal`` reads the same dictionary back in
~30 ms. The file is named by everything that could make it wrong: the vocabulary file's
size, change time and inode, what else the caller says it depends on (the pinned hash),
and this Python's version (``marshal``'s format is the interpreter's own). It is written
only after the vocabulary was read and checked, atomically and private to the user; a
file that cannot be read back is decoded again, and a cache that cannot be written is
done without.
"""

from __future__ import annotations

import contextlib
import logging
import marshal
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Final

from contextls.common.digest import sha256
from contextls.common.places import user_cache_dir

if TYPE_CHECKING:
    from collections.abc import Callable

LOG = logging.getLogger(__name__)
FOLDER: Final = "tokenizers"


def cached_ranks(
    name: str, source: Path, depends_on: str, decode: Callable[[], dict[bytes, int]]
) -> dict[bytes, int]:
    """The ranks of the vocabulary ``name`` read from ``source``: from the cache when it
    holds this very file's, else ``decode()`` (which reads and checks it), then kept."""
    path = _cache_file(name, source, depends_on)
    if path is not None:
        ranks = _read(path)
        if ranks is not None:
            return ranks
    ranks = decode()
    if path is not None:
        _write(path, ranks)
    return ranks


def _cache_file(name: str, source: Path, depends_on: str) -> Path | None:
    cache = user_cache_dir()
    try:
        info = source.stat()
    except OSError:
        return None
    if cache is None:
        return None  # nowhere plain to keep it: decoded at every start
    folder = cache / FOLDER
    identity = "\0".join(
        (
            str(source),
            str(info.st_size),
            str(info.st_mtime_ns),
            str(info.st_ino),
            depends_on,
            sys.version,
            str(marshal.version),
        )
    )
    return folder / f"{name}-{sha256(identity.encode()).hexdigest()[:16]}.marshal"


def _read(path: Path) -> dict[bytes, int] | None:
    try:
        ranks = marshal.loads(path.read_bytes())  # marshal.load of a stream is 4x slower
    except FileNotFoundError:
        return None
    except (OSError, EOFError, ValueError, TypeError) as error:
        LOG.info("decoding the vocabulary again: its cache %s is unreadable (%s)", path, error)
        return None
    if not isinstance(ranks, dict):
        return None
    return ranks


def _write(path: Path, ranks: dict[bytes, int]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        for stale in path.parent.glob(f"{path.name.rpartition('-')[0]}-*.marshal"):
            with contextlib.suppress(OSError):
                stale.unlink()  # another version of the same vocabulary
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".ranks-")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(marshal.dumps(ranks))
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as error:  # a full disk or a read-only home: the next start decodes again
        LOG.info("the vocabulary's cache %s was not written: %s", path, error)
