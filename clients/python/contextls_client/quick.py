"""The commands people run most, on a daemon that runs, with the standard library only.

``contextls status``, ``ls`` and ``show`` (with ``--json``, ``--workspace``, ``show``'s
``--format``, ``--max-tokens``, ``--query`` and ``--auto``) read the window: they are
sent in the same write as ``serverInfo`` and the session's opening, so the command
waits on the daemon once, and their answers are kept only if that daemon serves this
database and runs this code. What they print is written once for both paths
(``human``), from the classes generated from the protocol (``wire_types``).

Anything else (another command or option, no daemon listening, a daemon to restart, a
platform where the state directory is not plain to see) returns None, and the full
command line (``commandline``) runs, which says what it does and why.
"""

from __future__ import annotations

import os
import socket
import sys

from contextls.common import runtime
from contextls.common.environment import flag
from contextls_client import wire_types as w
from contextls_client.console import Console
from contextls_client.human import listing_lines, render_notes, status_report
from contextls_client.project import project_root
from contextls_client.quick_talk import (
    STORAGE_ENV,
    Command,
    Conversation,
    opening,
    this_daemon,
    uri,
    went_away,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

NO_DAEMON_ENV: Final = "CONTEXTLS_NO_DAEMON"
FULL_ENV: Final = "CONTEXTLS_FULL_CLI"
"""Set, every command goes through argparse (a test compares the two paths with it)."""
CONFIG_DIR_ENV: Final = "CONTEXTLS_CONFIG_DIR"
TIMEOUT: Final = 120.0
FORMATS: Final = ("markdown", "xml", "json")


def understood(arguments: list[str]) -> Command | None:
    """The command, when it is one the quick path takes as it stands; else None."""
    command = Command()
    try:
        "".join(arguments).encode("utf-8")
    except UnicodeEncodeError:
        return None  # the full path says which argument the protocol cannot carry
    words = iter(arguments)
    for word in words:
        if word == "--json":
            command.json = True
        elif word in ("-w", "--workspace"):
            command.workspace = next(words, None)
            if command.workspace is None:
                return None
        elif word.startswith("--workspace="):
            command.workspace = word.partition("=")[2]
        elif not command.name and word in ("status", "ls", "show", "add"):
            command.name = word
        elif command.name == "add" and word in ("--pin", "--force"):
            setattr(command, word[2:], True)
        elif command.name == "add" and word and not word.startswith("-") and ":" not in word:
            command.targets.append(word)  # a file, a folder or a glob; FILE:LINES is argparse's
        elif command.name == "show" and word in ("--format", "--max-tokens", "--query"):
            value = next(words, None)
            if value is None or not _show_option(command, word, value):
                return None
        elif command.name == "show" and word == "--auto":
            command.auto = True
        else:
            return None  # another command, option or argument: argparse says what it takes
    if not command.name or (command.auto and not command.query) or command.workspace == "":
        return None
    if command.name == "add" and not command.targets:
        return None
    return command


def _show_option(command: Command, option: str, value: str) -> bool:
    if option == "--format":
        command.format = value
        return value in FORMATS
    if option == "--query":
        command.query = value
        return True
    try:
        command.max_tokens = int(value.replace(",", ""))
    except ValueError:
        return False
    return command.max_tokens >= 1


def run(arguments: list[str]) -> int | None:
    """Run the command the quick way, or return None for the full command line to."""
    command = understood(arguments)
    if command is None or _not_for_the_quick_path():
        return None
    database = _database()
    if database is None:
        return None
    try:
        directory = runtime.private_dir(runtime.runtime_dir_path())
    except runtime.NotPrivate:
        return None  # the full path says what is wrong with it
    root = _workspace(command.workspace)
    if root is None:
        return None
    sock = _connect(os.path.join(directory, runtime.socket_name(database))) or _start_daemon()
    if sock is None:
        return None  # the daemon could not start: the full path says why
    if command.name == "add":
        from contextls_client.quick_add import add

        with sock:
            return add(Conversation(sock), command, root, database)
    with sock:
        answers, shown = _session(sock, command, root, database)
    if answers is None:
        return None  # another database, other code: the full path says so, restarts it
    return _print(command, answers, shown, database)


def _not_for_the_quick_path() -> bool:
    return (
        flag(NO_DAEMON_ENV)
        or flag(FULL_ENV)
        or not runtime.can_check_peers()
        or _old_settings_file()
    )


def _old_settings_file() -> bool:
    """Settings a development build kept in a file of its own: the full path moves them."""
    directory = os.environ.get(CONFIG_DIR_ENV)
    if not directory:
        xdg = os.environ.get("XDG_CONFIG_HOME", "")
        home = os.environ.get("HOME", "")
        if not xdg.startswith("/") and not home.startswith("/"):
            return True  # not plain to see: let the full path look
        directory = os.path.join(xdg if xdg.startswith("/") else f"{home}/.config", "contextls")
    return os.path.exists(os.path.join(directory, "settings.json"))


def _database() -> str | None:
    """The database this command means, resolved as the full path resolves it."""
    chosen = os.environ.get(STORAGE_ENV) or None
    if chosen is not None:
        if chosen == ":memory:":
            return None
        return os.path.realpath(os.path.expanduser(chosen))
    state = runtime.plain_state_dir()
    if state is None or "//" in state or "/./" in state or "/../" in state:
        return None
    return os.path.join(state.rstrip("/"), runtime.DATABASE_NAME)


def _workspace(given: str | None) -> str | None:
    if given is not None:
        root = os.path.realpath(os.path.expanduser(given))
    else:
        root = project_root(os.path.realpath(os.getcwd()))
    try:
        root.encode("utf-8")  # a name the protocol cannot carry: the full path says so
    except UnicodeEncodeError:
        return None
    return root if os.path.isdir(root) else None


def _connect(path: str) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        if runtime.peer_uid(sock) != os.getuid():
            raise OSError("served by another user")
    except OSError:
        sock.close()
        return None
    sock.settimeout(TIMEOUT)
    return sock


def _start_daemon() -> socket.socket | None:
    """Start the daemon now, before the full path's modules are imported: its start is
    most of a person's first command, and the two overlap no more."""
    from contextls_client.daemon import DaemonError, connect_or_start

    try:
        return connect_or_start(os.environ.get(STORAGE_ENV) or None)
    except DaemonError:
        return None


def _session(
    sock: socket.socket, command: Command, root: str, database: str
) -> tuple[dict[int, dict[str, Any]] | None, list[str]]:
    """Ask the daemon what it runs, open the session and send the command, in one write;
    the answers by id (None: not this daemon), and what it showed the person."""
    talk = Conversation(sock)
    messages = [*opening(root, database), *_requests(command, uri(root))]
    try:
        talk.send(messages)
        answers = talk.answers({i for i, _, _ in messages if i is not None})
    except (OSError, ValueError) as error:
        went_away(error)
        return None, talk.shown
    if not this_daemon(answers, database):
        return None, talk.shown
    return answers, talk.shown


def _requests(command: Command, workspace: str) -> list[tuple[int, str, dict[str, Any]]]:
    if command.name == "status":
        return [(3, "contextls/status", {"workspace": workspace})]
    if command.name == "ls":
        return [
            (3, "contextls/list", {"workspace": workspace}),
            (4, "contextls/status", {"workspace": workspace}),
        ]
    params: dict[str, Any] = {"workspace": workspace}
    if command.format is not None:
        params["format"] = command.format
    if command.max_tokens is not None:
        params["maxTokens"] = command.max_tokens
    if command.query is not None:
        params["query"] = command.query
    if command.auto:
        params["autoRetrieve"] = True
    return [(3, "contextls/render", params)]


def _print(
    command: Command, answers: dict[int, dict[str, Any]], shown: list[str], database: str
) -> int:
    console = Console(json_mode=command.json)
    refused = next((answers[i]["error"] for i in sorted(answers) if "error" in answers[i]), None)
    if refused is not None:
        message = refused.get("message", "")
        console.note(f"contextls: {message}")
        error = {"code": refused.get("code"), "message": message, "data": refused.get("data")}
        console.raw_json({"error": error})
        return 1
    result = answers[3]["result"]
    if command.name == "status":
        console.raw_json(result)
        console.out(*status_report(w.Status(result), database, ascii_only=console.ascii_only))
    elif command.name == "ls":
        console.raw_json(result)
        width = _columns() if console.is_terminal else None
        items = w.ListResult(result).items
        console.out(*listing_lines(items, w.Status(answers[4]["result"]), width))
    else:
        rendered = w.RenderResult(result)
        if console.json_mode:
            console.raw_json(result)
        elif rendered.text:
            # Only the context goes to stdout, so `contextls show | llm` gets nothing else.
            console.raw(rendered.text if rendered.text.endswith("\n") else rendered.text + "\n")
        console.note(*render_notes(rendered, command.max_tokens))
    said: set[str] = set()
    for text in shown:
        warning = text.removeprefix("contextls: ")
        if warning not in said:
            said.add(warning)
            console.note(f"contextls: warning: {warning}")
    return 0


def _columns() -> int:
    """The terminal's width, as ``shutil.get_terminal_size`` gives it (``$COLUMNS`` first)."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except OSError:
        return 80
