"""``contextls serve`` (stdio or loopback TCP) and the daemon's own entry point."""

from __future__ import annotations

import argparse
import contextlib
import gc
import ipaddress
import logging
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator


def _loopback(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        is_loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        is_loopback = False
    if not is_loopback:
        raise argparse.ArgumentTypeError(
            f"{host} is not a loopback address; contextls only listens on 127.0.0.1/::1"
        )
    try:
        number = int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{port!r} is not a port number") from None
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"{number} is not a port number")
    return host, number


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="contextls serve",
        description="Run the contextls language server (stdio unless --tcp is given).",
    )
    parser.add_argument(
        "--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)"
    )
    parser.add_argument(
        "--tcp",
        metavar="HOST:PORT",
        type=_loopback,
        help="listen on a loopback address instead (a development aid: no authentication)",
    )
    _logging_arguments(parser, "WARNING")
    return parser


def _logging_arguments(parser: argparse.ArgumentParser, level: str) -> None:
    parser.add_argument("--log-level", default=level, choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    parser.add_argument("--log-file", help="write the log here instead of stderr")


def _logging(level: str, log_file: str | None) -> None:
    if log_file:  # a log names files and workspaces: the user's alone
        from pathlib import Path

        from contextls.common.places import keep_private, private_file

        private_file(Path(log_file))
        keep_private(Path(log_file), 0o600)
    handler: logging.Handler = (
        logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    )
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s",
        handlers=[handler],
    )
    if level != "DEBUG":
        # pygls logs every feature it registers (the daemon: per connection).
        logging.getLogger("pygls").setLevel(logging.WARNING)
        # pygls logs a traceback for every request that ends in an error reply;
        # refusals are expected here, and our handlers log the unexpected ones.
        logging.getLogger("pygls.protocol.json_rpc").setLevel(logging.CRITICAL)


def daemon_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m contextls daemon",
        description="Run the shared daemon in the foreground (the CLI starts it on demand).",
    )
    parser.add_argument("--storage", help="the database it serves (default: the user's)")
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=None,
        help="seconds without clients before it exits (default: $CONTEXTLS_DAEMON_IDLE or 900)",
    )
    _logging_arguments(parser, "INFO")
    return parser


SWITCH_INTERVAL = 0.001
"""Seconds a thread that computes keeps the interpreter while another waits for it
(Python's default is 0.005). The loop that answers every client gives the interpreter up
at each read, write and SQLite call, and takes it back after the thread computing a map
or a count lets go: a few dozen of those waits at 5 ms each were the 0.1 s an ``addText``
waited beside a ranking; at 1 ms the computing thread loses a few per cent."""


@contextlib.contextmanager
def _loading_the_server() -> Iterator[None]:
    """The collector off while the server's modules load, and what they made frozen
    after: the imports allocate ~100,000 objects that live as long as the process, and
    the collections they set off were a sixth of a daemon's start, on the path of the
    person's first command; frozen, later collections do not walk them again. Then the
    interpreter is shared between threads as a server of many clients needs it."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()
        sys.setswitchinterval(SWITCH_INTERVAL)


def daemon_main(argv: list[str] | None = None) -> int:
    import os

    from contextls.common.places import NotPrivate

    with _loading_the_server():
        from contextls.daemon import server as daemon

    args = daemon_parser().parse_args(argv)
    _logging(args.log_level, args.log_file)
    idle = args.idle_timeout
    if idle is None:
        try:
            idle = float(os.environ.get("CONTEXTLS_DAEMON_IDLE", daemon.DEFAULT_IDLE_TIMEOUT))
        except ValueError:
            idle = daemon.DEFAULT_IDLE_TIMEOUT
    log_file = os.path.abspath(args.log_file) if args.log_file else ""
    try:
        return daemon.run(args.storage, idle, log_file)
    except NotPrivate as error:  # a runtime folder others can reach: said, not a traceback
        print(f"contextls: {error}", file=sys.stderr)
        return 1
    except Exception:
        logging.getLogger(__name__).exception("the daemon failed")
        return 1


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    _logging(args.log_level, args.log_file)
    with _loading_the_server():
        from contextls.lsp.handlers import register
        from contextls.lsp.server import ContextServer
        from contextls.lsp.transport import serve_stdio, serve_tcp

    server = ContextServer()
    register(server)
    if args.tcp:
        host, port = args.tcp
        return serve_tcp(server, host, port)
    return serve_stdio(server)
