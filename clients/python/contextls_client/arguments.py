"""The ``contextls`` command line: global options and one subparser per command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, Final, NoReturn, get_args

from contextls.protocol import ITEM_KINDS, Encoding, RenderFormat, SearchMode

PROGRAM: Final = "contextls"
TEXT_KINDS: Final = tuple(kind for kind in ITEM_KINDS if kind != "file")

DESCRIPTION: Final = """\
Keep the LLM context of a workspace: mark files and line ranges, see the
token budget, render the window for a model. Commands talk LSP to your
contextls daemon (started on demand, shared with your editors).
"""

EPILOG: Final = """\
exit codes: 0 ok, 1 the server refused the request (its message is on
stderr), 2 usage error.

environment: CONTEXTLS_STORAGE (database path, like --storage),
CONTEXTLS_NO_DAEMON=1 (each command starts its own server instead),
CONTEXTLS_DAEMON_IDLE (seconds the daemon waits without clients; 900),
CONTEXTLS_RUNTIME_DIR (where the daemon's socket lives).
"""


class UsageExit(SystemExit):
    """argparse refused the command line: exit code 2, and what it said (for ``--json``)."""

    def __init__(self, message: str) -> None:
        super().__init__(2)
        self.message = message


class Parser(argparse.ArgumentParser):
    """argparse, whose refusals keep their words for the ``--json`` error document."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise UsageExit(message)


def positive_int(text: str) -> int:
    try:
        value = int(text.replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _global_options(inside_subcommand: bool) -> Parser:
    """Options accepted before and after the subcommand name.

    The copy inside each subcommand defaults to SUPPRESS so that it only
    overrides what was given before the subcommand when it is given itself.
    """
    unset = argparse.SUPPRESS if inside_subcommand else None
    parent = Parser(add_help=False)
    group = parent.add_argument_group("global options")
    group.add_argument(
        "-w",
        "--workspace",
        metavar="DIR",
        default=unset,
        help="the workspace folder (default: the nearest folder above the current directory "
        "holding a .contextls marker, else the git repository's root, else the current "
        "directory; the search stops below your home directory)",
    )
    group.add_argument(
        "--storage",
        metavar="PATH",
        default=unset,
        help="SQLite database of the windows, or :memory: (default: $CONTEXTLS_STORAGE, "
        "else the server's default in the user state dir)",
    )
    group.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if inside_subcommand else False,
        help="print the result as JSON on stdout, for scripts",
    )
    return parent


def _kind_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kind",
        action="append",
        choices=ITEM_KINDS,
        metavar="KIND",
        help=f"only items of this kind; repeatable ({', '.join(ITEM_KINDS)})",
    )


class _Unbuilt:
    """Stands in for the parser of a command this run does not use: takes any call."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self


_GLOBAL_WITH_VALUE: Final = frozenset({"-w", "--workspace", "--storage"})


def command_in(argv: Sequence[str]) -> str | None:
    """The command an argument list names (the first word that is not a global option)."""
    words = iter(argv)
    for word in words:
        if word in _GLOBAL_WITH_VALUE:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``only``, just that command's parser is built.

    Building every command's parser costs ~10 ms, a tenth of a warm command;
    the command is known before parsing, so the others are left unbuilt.
    """
    parser = Parser(
        prog=PROGRAM,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[_global_options(inside_subcommand=False)],
    )
    parser.add_argument(
        "--version", action="store_true", help="print the version (with --json, as JSON) and exit"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = [_global_options(inside_subcommand=True)]

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        if only is not None and name != only:
            return _Unbuilt()  # type: ignore[return-value]
        return commands.add_parser(name, help=help_text, description=help_text, parents=common)

    commands.add_parser(
        "serve",
        help="run the language server (arguments go to it: --stdio, --tcp HOST:PORT)",
        add_help=False,
    )

    add = command(
        "add", "add files, line ranges, definitions by name, directories or globs to the window"
    )
    add.add_argument(
        "targets",
        nargs="*",
        metavar="PATH[:START[-END]]",
        help="a file, FILE:LINE, FILE:START-END (1-based, inclusive), FILE::NAME (a "
        "definition: Parser.parse, Parser), a directory, or a glob",
    )
    add.add_argument(
        "--symbol",
        action="append",
        metavar="NAME",
        help="a definition found by its name anywhere in the workspace (repeatable)",
    )
    add.add_argument("--pin", action="store_true", help="pin what is added (never evicted)")
    add.add_argument(
        "--map",
        action="store_true",
        help="add a map of the repository: its definitions ranked by use, no bodies, "
        "fitted to mapTokens (see --map-tokens, --query)",
    )
    add.add_argument(
        "--query", metavar="WORDS", help="with --map: rank what these words name higher"
    )
    add.add_argument(
        "--map-tokens",
        type=positive_int,
        metavar="N",
        help="with --map: at most N tokens (default: the window's mapTokens)",
    )
    add.add_argument(
        "--outline",
        action="store_true",
        help="add files and classes as their outlines: signatures, no bodies",
    )
    add.add_argument(
        "--dry-run",
        action="store_true",
        help="say what would be added and what it would evict; send nothing",
    )
    add.add_argument(
        "--force",
        action="store_true",
        help="add even if it evicts more than half of the window",
    )
    add.add_argument("--language", metavar="L", help="the language tag, if the extension misleads")

    add_text = command("add-text", "add a piece of text (a note, an error, a REPL transcript)")
    add_text.add_argument("text", nargs="?", help="the text; omitted or '-' reads stdin")
    add_text.add_argument("--kind", choices=TEXT_KINDS, default="text")
    add_text.add_argument("--language", metavar="L", help="language of the text, for its fence")
    add_text.add_argument("--pin", action="store_true", help="pin it (never evicted)")

    ls = command("ls", "list the items in the window, oldest first")
    _kind_option(ls)
    ls.add_argument("--limit", type=positive_int, metavar="N", help="only the N most recent")

    show = command("show", "print the window rendered for an LLM (stdout only)")
    show.add_argument("--format", choices=get_args(RenderFormat), default="markdown")
    show.add_argument(
        "--max-tokens",
        type=positive_int,
        metavar="N",
        help="leave out the oldest unpinned items until the text fits in N tokens",
    )
    show.add_argument(
        "--query",
        metavar="Q",
        help="also append archived items relevant to Q (hybrid search when available)",
    )
    show.add_argument(
        "--auto",
        action="store_true",
        help="with --query: fill the tokens the window leaves with every archived item close "
        "enough in meaning to Q (not just the best few)",
    )
    _kind_option(show)
    show.add_argument("--limit", type=positive_int, metavar="N", help="only the N most recent")

    command("status", "the token budget, item counts, and what goes next")

    rm = command("rm", "remove items from the window (to the archive): ids, or paths and globs")
    rm.add_argument("ids", nargs="+", metavar="ID|PATH")

    pin = command("pin", "pin items so they are never evicted: ids, or paths and globs")
    pin.add_argument("ids", nargs="+", metavar="ID|PATH")
    unpin = command("unpin", "unpin items: ids, or paths and globs")
    unpin.add_argument("ids", nargs="+", metavar="ID|PATH")

    refresh = command(
        "refresh", "read items again from their files: ids, paths or globs (default: every stale)"
    )
    refresh.add_argument("ids", nargs="*", metavar="ID|PATH")

    expand = command("expand", "show items whole again (a file shown as its outline)")
    expand.add_argument("ids", nargs="+", metavar="ID|PATH")
    outline = command(
        "outline", "show files, and classes added by name, as their outlines (no bodies)"
    )
    outline.add_argument("ids", nargs="+", metavar="ID|PATH")

    clear = command("clear", "move every item to the archive")
    clear.add_argument("--keep-pinned", action="store_true", help="leave pinned items in place")

    search = command("search", "search the archive of evicted and cleared items")
    search.add_argument("query", nargs="+", metavar="QUERY")
    search.add_argument("--limit", type=positive_int, default=20, metavar="N")
    search.add_argument(
        "--wait",
        action="store_true",
        help="first wait until everything archived is embedded (search by meaning), "
        "showing how many items are left",
    )
    search.add_argument(
        "--mode",
        choices=get_args(SearchMode),
        help="default: hybrid when semantic search is available, else keyword",
    )
    _kind_option(search)

    restore = command("restore", "bring archived items back into the window")
    restore.add_argument("ids", nargs="+", metavar="ID")
    restore.add_argument("--pin", action="store_true", help="pin them as they come back")

    count = command(
        "tokens", "count the tokens of the workspace's files, folders and globs, or of stdin ('-')"
    )
    count.add_argument("sources", nargs="+", metavar="PATH|-")
    count.add_argument(
        "--model",
        action="append",
        metavar="MODEL",
        help="count in this model's tokens (gpt-4o, claude-opus-4.6, claude-opus-4.7, "
        "gemini-2.5, qwen3, mistral, llama-3, ...); again to compare; default: the window's",
    )
    count.add_argument("--encoding", choices=get_args(Encoding), help="a tokenizer by its id")

    forget = command("forget", "remove items for good: window, archive and database file")
    forget.add_argument("ids", nargs="*", metavar="ID")
    forget.add_argument("--query", nargs="+", metavar="WORD", help="every item holding all words")
    forget.add_argument("--dry-run", action="store_true", help="list what would go, change nothing")
    forget.add_argument("--yes", action="store_true", help="do not ask (it cannot be undone)")

    export = command("export", "print the window (and --archive) as one JSON document")
    export.add_argument("--archive", action="store_true", help="include the archive")
    export.add_argument("-o", "--output", metavar="FILE", help="write it here instead of stdout")

    import_ = command("import", "merge an exported document into this workspace")
    import_.add_argument("file", metavar="FILE|-")
    import_.add_argument("--dry-run", action="store_true", help="check it and show the new ids")

    daemon = command("daemon", "show, start or stop your shared contextls daemon")
    daemon_actions = daemon.add_subparsers(dest="daemon_action", metavar="ACTION")
    for action, help_text in (
        ("status", "is it running, since when, for which database (the default action)"),
        ("start", "start it now (commands start it when they need it)"),
        ("stop", "stop it; it commits first, and the next command starts it again"),
    ):
        daemon_actions.add_parser(action, help=help_text, parents=common)

    command("mcp", "serve this workspace's context to LLM agents (MCP over stdio)")
    connect = commands.add_parser(
        "connect",
        help="join stdio to the daemon: an editor's server command, to share its windows",
        description="Join this process's stdin and stdout to the user's daemon (started if "
        "need be): the server command an editor runs, so that every editor, the command "
        "line and agents share each workspace's window. Flags an editor adds (--stdio) "
        "are accepted: they mean stdio.",
        add_help=False,
        parents=common,  # --storage picks the daemon; editors' own flags (--stdio) pass
    )
    connect.add_argument(
        "-h", "--help", action="store_true", dest="connect_help", help="show this help and exit"
    )
    connect.set_defaults(connect_usage=connect.format_help)

    config = command("config", "show or change the window settings of this workspace")
    actions = config.add_subparsers(dest="config_action", metavar="ACTION")
    actions.add_parser("show", help="the effective settings (the default action)", parents=common)
    set_parser = actions.add_parser("set", help="set KEY to VALUE", parents=common)
    set_parser.add_argument(
        "key", metavar="KEY", help="maxItems, maxTokens, encoding, evictionPolicy, maxFileBytes"
    )
    set_parser.add_argument("value", metavar="VALUE")
    unset_parser = actions.add_parser("unset", help="back to the default", parents=common)
    unset_parser.add_argument("key", metavar="KEY")
    for changing in (set_parser, unset_parser):
        changing.add_argument(
            "--dry-run",
            action="store_true",
            help="say what the change would evict; change nothing",
        )
        changing.add_argument(
            "--force",
            action="store_true",
            help="change it even if it evicts more than half of the window",
        )
    return parser
