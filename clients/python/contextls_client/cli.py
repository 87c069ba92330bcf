"""``contextls``: the command-line client (and ``contextls serve``, the server).

Every subcommand except ``serve`` spawns a server over stdio, speaks LSP to it
through :class:`contextls_client.lsp_client.ContextlsClient`, and shuts it
down; the CLI never imports the server's core, only :mod:`contextls.protocol`.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Final

from contextls_client.arguments import PROGRAM, build_parser
from contextls_client.commands import HANDLERS
from contextls_client.commands.text import UnreadableInput
from contextls_client.config_store import ConfigError, ConfigStore
from contextls_client.console import Console
from contextls_client.lsp_client import ContextlsError, ServerGoneError
from contextls_client.reports import ErrorDocument, ErrorReport
from contextls_client.session import Invocation, Place, UsageError
from contextls_client.targets import TargetError

EXIT_OK: Final = 0
EXIT_REFUSED: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130
LOCAL_FAILURE_CODE: Final = 0
"""``code`` of a ``--json`` error that never reached the server (unreadable file, bad config)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns (and, as a console script, exits with) its exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        # `serve` hands what argparse does not know (--stdio, --tcp, --help) to the
        # server; every other command takes only its own arguments.
        args, extra = parser.parse_known_args(arguments)
        if args.command == "serve":
            return _serve(extra)
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exit_request:  # argparse: --help (0) or a usage error (2)
        return int(exit_request.code or 0)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE

    console = Console(json_mode=args.json)
    try:
        place = Place.from_options(args.workspace, args.storage)
        invocation = Invocation(args, place, console, ConfigStore())
        return asyncio.run(HANDLERS[args.command](invocation))
    except (UsageError, TargetError) as error:
        parser.print_usage(sys.stderr)
        console.note(f"{PROGRAM}: error: {error}")
        return EXIT_USAGE
    except ContextlsError as error:
        return _refused(console, error.code, error.message)
    except (ServerGoneError, ConfigError, UnreadableInput) as error:
        return _refused(console, LOCAL_FAILURE_CODE, str(error))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`contextls show | head`): not an error. Point
        # stdout at devnull so the interpreter's final flush does not complain.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


def _refused(console: Console, code: int, message: str) -> int:
    console.note(f"{PROGRAM}: {message}")
    console.json(ErrorDocument(error=ErrorReport(code=code, message=message)))
    return EXIT_REFUSED


def _serve(arguments: list[str]) -> int:
    """Hand over to the server; imported only now so other commands stay light."""
    server_cli = importlib.import_module("contextls.lsp.cli")
    return int(server_cli.main(arguments))


if __name__ == "__main__":
    sys.exit(main())
