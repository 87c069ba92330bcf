"""``contextls``: every command, parsed by argparse (``cli`` tries the quick path first).

Every command (but ``serve``, ``connect`` and ``daemon``) is one LSP session:
on the user's daemon through its socket (``socket_client``; started on
demand by ``daemon``), or, with ``$CONTEXTLS_NO_DAEMON=1`` or an in-memory
database, on a server spawned for it (``lsp_client``). The CLI never imports
the server's core, only :mod:`contextls.protocol`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Final

from contextls.common.places import NotPrivate, log_path
from contextls.protocol import ErrorCode
from contextls_client.arguments import PROGRAM, UsageExit, build_parser, command_in
from contextls_client.cli import say_version
from contextls_client.commands import COMMANDS
from contextls_client.commands import handler as command_handler
from contextls_client.config_store import ConfigError, ConfigStore
from contextls_client.console import Console
from contextls_client.daemon import DaemonError, wanted
from contextls_client.messages import ContextlsError, NotUtf8, ServerGoneError
from contextls_client.reports import ErrorDocument, ErrorReport
from contextls_client.session import (
    Invocation,
    Place,
    UnreadableInput,
    UsageError,
)
from contextls_client.targets import TargetError

EXIT_OK: Final = 0
EXIT_REFUSED: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130
LOCAL_FAILURE_CODE: Final = 0
"""``code`` of a ``--json`` error that never reached the server (unreadable file, bad config)."""
USAGE_CODE: Final = int(ErrorCode.INVALID_PARAMS)
"""``code`` of a ``--json`` usage error (the command line asks for something impossible)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    named = command_in(arguments)
    parser = build_parser(only=named if named in COMMANDS else None)
    try:
        # `serve` hands what argparse does not know (--stdio, --tcp, --help) to the
        # server; every other command takes only its own arguments.
        args, extra = parser.parse_known_args(arguments)
        if args.version:  # before the command: `contextls --version status` says the version
            return say_version(as_json=args.json or "--json" in arguments)
        if args.command == "serve":
            return _serve(extra)
        if args.command == "connect":
            if args.connect_help:
                print(args.connect_usage(), end="")
                return 0
            # Editors add their own flags (vscode-languageclient: --stdio); they mean stdio here.
            return _connect(args.storage)
        if args.command == "mcp":
            return _mcp(args.workspace, args.storage)
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exit_request:  # argparse: --help (0) or a usage error (2)
        code = int(exit_request.code or 0)
        if code == EXIT_USAGE and "--json" in arguments:
            problem = (
                exit_request.message
                if isinstance(exit_request, UsageExit)
                else "the command line is not valid (the usage above says what it takes)"
            )
            Console(json_mode=True).json(
                ErrorDocument(error=ErrorReport(code=USAGE_CODE, message=problem))
            )
        return code
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE

    console = Console(json_mode=args.json)
    try:
        place = Place.from_options(args.workspace, args.storage)
        invocation = Invocation(args, place, console, ConfigStore())
        return _run_retrying_once(invocation, console)
    except (UsageError, TargetError) as error:
        parser.print_usage(sys.stderr)
        console.note(f"{PROGRAM}: error: {error}")
        console.json(ErrorDocument(error=ErrorReport(code=USAGE_CODE, message=str(error))))
        return EXIT_USAGE
    except ContextlsError as error:
        return _refused(console, error.code, error.message, error.data)
    except (
        ServerGoneError,
        ConfigError,
        UnreadableInput,
        DaemonError,
        NotPrivate,
        NotUtf8,
    ) as error:
        return _refused(console, LOCAL_FAILURE_CODE, str(error))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _run_retrying_once(invocation: Invocation, console: Console) -> int:
    """Run the command; if the daemon went away under it, start it again and retry once."""
    handler = command_handler(invocation.args.command)
    if not wanted(invocation.place.storage):
        return handler(invocation)  # a server of its own: nothing to start again
    try:
        return handler(invocation)
    except ServerGoneError as gone:
        if invocation.args.command == "daemon":
            raise
        console.note(f"{PROGRAM}: the daemon went away ({gone.reason}); starting it again")
        try:
            return handler(invocation)
        except ServerGoneError as again:
            log = log_path(invocation.place.storage)
            raise ServerGoneError(
                f"the daemon went away again ({again.reason}); see {log}"
            ) from again


def _mcp(workspace: str | None, storage: str | None) -> int:
    """The MCP server; stdout is its protocol, so every word for a person goes to stderr."""
    try:
        from contextls_client.mcp_server import main as serve_mcp
    except ImportError as error:
        print(
            f"{PROGRAM} mcp needs the MCP SDK ({error.name or error}): "
            "pip install 'contextls[mcp]'",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    try:
        place = Place.from_options(workspace, storage)
        return serve_mcp(place, workspace_given=workspace is not None)
    except (DaemonError, UsageError) as error:
        print(f"{PROGRAM} mcp: {error}", file=sys.stderr)
        return EXIT_REFUSED


def _connect(storage: str | None) -> int:
    from contextls.common.places import can_check_peers
    from contextls_client.bridge import bridge

    if not can_check_peers():
        print(
            f"{PROGRAM} connect: this platform cannot check who connects to a shared daemon; "
            "serving this editor on its own",
            file=sys.stderr,
        )
        return _serve([])
    try:
        place = Place.from_options(None, storage)
        return bridge(place.storage)
    except (DaemonError, UsageError) as error:
        print(f"{PROGRAM} connect: {error}", file=sys.stderr)
        return EXIT_REFUSED


def _refused(console: Console, code: int, message: str, data: object = None) -> int:
    console.note(f"{PROGRAM}: {message}")
    console.json(ErrorDocument(error=ErrorReport(code=code, message=message, data=data)))
    return EXIT_REFUSED


def _serve(arguments: list[str]) -> int:
    """Become the server (``python -m contextls serve``): a client imports only the wire
    contract, so the server's own entry point runs it, in this process's place (stdin,
    stdout and the pid an editor holds stay the same)."""
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-P", "-m", "contextls", "serve", *arguments])
