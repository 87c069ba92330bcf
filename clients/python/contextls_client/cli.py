"""``contextls``: the command-line client (and ``contextls serve``, the server).

Every command (but ``serve``, ``connect`` and ``daemon``) is one LSP session: on the
user's daemon through its socket (``socket_client``; started on demand by ``daemon``),
or, with ``$CONTEXTLS_NO_DAEMON=1`` or an in-memory database, on a server spawned for it.
The commands people run most, on a daemon that runs, take the quick path (``quick``:
the standard library only); everything else, and anything unusual, goes through
argparse (``commandline``). A client imports only ``contextls.protocol`` and
``contextls.common`` of the server.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

EXIT_OK = 0
EXIT_FAILED = 1
OUTPUT_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EBADF})
"""Why writing the answer can fail when the command itself did not."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns (and, as a console script, exits with) its exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:  # started with that descriptor closed
            setattr(sys, name, open(os.devnull, "w"))  # noqa: SIM115 (for the process's life)
    try:
        if arguments in (["--version"], ["--json", "--version"], ["--version", "--json"]):
            return say_version(as_json="--json" in arguments)
        from contextls_client import quick

        code = quick.run(arguments)
        if code is not None:
            if argv is None:
                _leave_now(code)
            return code
        from contextls_client import commandline

        return commandline.main(arguments)
    except BrokenPipeError:
        # The reader went away (`contextls show | head`): not an error. Point
        # stdout at devnull so the interpreter's final flush does not complain.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except OSError as error:
        if error.errno not in OUTPUT_ERRORS:
            raise
        # The answer could not be written (`> /dev/full`, a vanished disk): said, not a
        # traceback; what the command changed, it changed.
        with contextlib.suppress(OSError, ValueError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (the final flush goes nowhere)
        _say_unwritten(error)
        return EXIT_FAILED


def say_version(as_json: bool) -> int:
    """Print the version: with ``--json`` one JSON object, as every command prints."""
    from contextls import __version__

    print(f'{{"version": "{__version__}"}}' if as_json else f"contextls {__version__}")
    return EXIT_OK


def _say_unwritten(error: Exception) -> None:
    why = (error.strerror if isinstance(error, OSError) else None) or str(error)
    with contextlib.suppress(OSError, ValueError):
        print(f"contextls: cannot write its output: {why}", file=sys.stderr)


def _leave_now(code: int) -> None:
    """End a quick command without the interpreter's teardown of every module it
    imported, a tenth of the command's time: the quick path leaves nothing to finalize
    (its socket is closed, nothing is registered with ``atexit``), so only the output
    needs flushing."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        code = EXIT_OK  # the reader went away (`contextls show | head`): not an error
    except (OSError, ValueError) as error:
        code = EXIT_FAILED  # the answer was not all written
        _say_unwritten(error)
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
