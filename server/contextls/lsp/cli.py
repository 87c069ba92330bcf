"""``contextls serve``: run the language server over stdio or loopback TCP."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import sys


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
    parser.add_argument(
        "--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    parser.add_argument("--log-file", help="write the log here instead of stderr")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    handler: logging.Handler = (
        logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    )
    logging.basicConfig(
        level=args.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[handler],
    )
    if args.log_level != "DEBUG":
        # pygls logs a traceback for every request that ends in an error reply;
        # refusals are expected here, and our handlers log the unexpected ones.
        logging.getLogger("pygls.protocol.json_rpc").setLevel(logging.CRITICAL)
    from contextls.lsp.handlers import register
    from contextls.lsp.server import ContextServer
    from contextls.lsp.transport import serve_stdio, serve_tcp

    server = ContextServer()
    register(server)
    if args.tcp:
        host, port = args.tcp
        return serve_tcp(server, host, port)
    return serve_stdio(server)
