"""SHA-256 for the names the CLI computes on every command (the daemon's socket, the
build id), from CPython's own implementation when it has one.

``hashlib`` loads OpenSSL's bindings (about 2 ms of every command's start); the
built-in module gives the same digest, so a socket's name stays the same whichever
module computed it, and an older daemon is still found and restarted after an upgrade.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:  # CPython 3.12 and later
        from _sha2 import sha256
    except ImportError:
        try:  # CPython 3.11
            from _sha256 import sha256
        except ImportError:  # another interpreter, or a build without it
            from hashlib import sha256

__all__ = ["sha256"]
