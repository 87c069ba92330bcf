"""``python -m contextls serve`` (a server of one client) or ``python -m contextls daemon``."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["daemon"]:
        from contextls.daemon.cli import daemon_main

        return daemon_main(args[1:])
    if args[:1] == ["serve"]:
        args = args[1:]
    from contextls.daemon.cli import main as serve

    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
