"""The CLI's half of the window contract, through the installed ``contextls``: ``--json``
is one object whose keys do not depend on how many things were named, every refusal is
``{"error": {code, message, data}}`` and names its file, and the exit codes are the
README's (0 ok, 1 refused, 2 usage)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from contextls.protocol import AddFilesResult, ErrorCode
from contextls_client.reports import TokensReport
from tests.cli.conftest import Cli

ERROR_KEYS = {"code", "message", "data"}
BIG = "def big():\n" + "    value = 1\n" * 2500


def document(
    cli: Cli, *args: str, code: int = 0, stdin: str | None = None, cwd: Path | None = None
) -> dict[str, Any]:
    run = cli(*args, "--json", code=code, stdin=stdin, cwd=cwd)
    parsed = json.loads(run.stdout)  # exactly one JSON document, nothing else
    assert isinstance(parsed, dict), run.stdout
    return parsed


def refusal(cli: Cli, *args: str, code: int = 1, cwd: Path | None = None) -> dict[str, Any]:
    parsed = document(cli, *args, code=code, cwd=cwd)
    assert set(parsed) == {"error"}, parsed
    assert set(parsed["error"]) == ERROR_KEYS, parsed
    return dict(parsed["error"])


def test_the_keys_do_not_depend_on_how_many_things_were_named(cli: Cli) -> None:
    cli.write("a.py", "def alpha():\n    return 1\n")
    cli.write("b.py", "def beta():\n    return 2\n")
    one_file = document(cli, "add", "a.py")
    by_name = document(cli, "add", "b.py::beta")
    the_map = document(cli, "add", "--map")
    assert (
        set(one_file)
        == set(by_name)
        == set(the_map)
        == set(AddFilesResult.__struct_encode_fields__)
    )
    assert by_name["items"][0]["metadata"]["symbol"] == "beta"

    pin_one = document(cli, "pin", "ctx-1")
    pin_two = document(cli, "pin", "ctx-1", "ctx-2")
    assert set(pin_one) == set(pin_two) == {"items", "merged", "evicted", "status"}
    assert [item["id"] for item in pin_two["items"]] == ["ctx-1", "ctx-2"]

    count_one = document(cli, "tokens", "a.py")
    count_two = document(cli, "tokens", "a.py", "b.py")
    assert set(count_one) == set(count_two) == set(TokensReport.__struct_encode_fields__)
    assert count_two["total"] == sum(source["tokens"] for source in count_two["sources"])

    running = document(cli, "daemon")
    cli("daemon", "stop")
    stopped = document(cli, "daemon", code=1)
    assert set(running) == set(stopped)
    assert running["running"] and not stopped["running"] and stopped["server"] is None


def test_a_mixed_add_is_one_document_in_one_session(cli: Cli) -> None:
    cli.write("a.py", "def alpha():\n    return 1\n")
    cli.write("notes.md", "# notes\n")
    added = document(cli, "add", "a.py::alpha", "notes.md")
    assert [item["label"] for item in added["items"]] == ["a.py:1-2 (alpha)", "notes.md"]
    assert added["status"]["itemCount"] == 2
    assert added["tokens"] == sum(item["tokens"] for item in added["items"])


def test_every_refusal_is_an_error_document_naming_the_file(cli: Cli) -> None:
    cli.write("ok.py", "x = 1\n")
    cli.write("big.py", BIG)
    cli.write("big2.py", BIG.replace("big", "big2"))

    missing = refusal(cli, "add", "nope.py")
    assert missing["code"] == ErrorCode.FILE_NOT_FOUND and "nope.py" in missing["message"]

    # Several files, every one over the budget: each refusal names its file.
    both = cli("add", "big.py", "big2.py", code=1)
    assert "contextls: big.py: item has" in both.stderr
    assert "contextls: big2.py: item has" in both.stderr
    error = refusal(cli, "add", "big.py", "big2.py")
    assert error["code"] == ErrorCode.ITEM_TOO_LARGE
    assert "big.py: item has" in error["message"] and "big2.py: item has" in error["message"]
    assert [r["code"] for r in error["data"]["refused"]] == [ErrorCode.ITEM_TOO_LARGE] * 2

    # A name the file does not define: the error's data, not a top-level key of its own.
    unknown = refusal(cli, "add", "ok.py::Nope")
    assert unknown["code"] == ErrorCode.SYMBOL_NOT_FOUND
    assert unknown["message"] == "ok.py defines no Nope"

    # A usage error keeps argparse's words.
    usage = refusal(cli, "show", "--format", "html", code=2)
    assert usage["code"] == ErrorCode.INVALID_PARAMS
    assert "invalid choice: 'html'" in usage["message"] and usage["data"] is None
    assert cli("ls", "--json").decode(dict)["items"] == []


def test_a_partial_add_is_a_result_and_exits_1(cli: Cli) -> None:
    cli.write("ok.py", "x = 1\n")
    cli.write("big.py", BIG)
    run = cli("add", "ok.py", "big.py", code=1)
    assert "added ctx-1 file ok.py" in run.stdout
    assert "contextls: big.py: item has" in run.stderr
    cli("rm", "ctx-1")
    partial = cli("add", "ok.py", "big.py", "--json", code=1).decode(AddFilesResult)
    assert [item.label for item in partial.items] == ["ok.py"]
    assert [r.code for r in partial.refused] == [ErrorCode.ITEM_TOO_LARGE]


def test_tokens_refuses_a_fifo_and_a_file_outside_the_workspace(cli: Cli) -> None:
    cli.write("ok.py", "x = 1\n")
    os.mkfifo(cli.workspace / "pipe")
    outside = cli.workspace.parent / "elsewhere.txt"
    outside.write_text("not in the workspace\n")

    # The FIFO is refused, not read: no writer ever comes, so reading it would never end.
    pipe = refusal(cli, "tokens", "pipe")
    assert "pipe is a named pipe" in pipe["message"]
    away = refusal(cli, "tokens", str(outside))
    assert away["code"] == ErrorCode.OUTSIDE_WORKSPACE and str(outside) in away["message"]

    mixed = cli("tokens", "ok.py", str(outside), code=1)
    assert f"contextls: {outside} is outside the workspace" in mixed.stderr
    assert "ok.py" in mixed.stdout or "tokens in" in mixed.stdout
    counted = cli("tokens", "ok.py", str(outside), "--json", code=1).decode(TokensReport)
    assert [source.source for source in counted.sources] == ["ok.py"]
    assert [r.code for r in counted.refused] == [ErrorCode.OUTSIDE_WORKSPACE]
    # What is not in the workspace is counted from stdin.
    piped = cli("tokens", "-", "--json", stdin=outside.read_text()).decode(TokensReport)
    assert [source.source for source in piped.sources] == ["-"] and piped.total > 0


def test_a_definition_already_in_the_window_is_not_said_to_be_added(cli: Cli) -> None:
    cli.write("shapes.py", "def area(side):\n    return side * side\n")
    cli("add", "shapes.py")
    run = cli("add", "shapes.py::area")
    assert run.stdout.startswith("nothing added: area is in the window already, in ctx-1 file")
    assert "added" not in run.stdout.replace("nothing added", "")
    assert cli("ls", "--json").decode(dict)["items"][0]["id"] == "ctx-1"


def test_show_says_once_why_each_item_was_left_out(cli: Cli) -> None:
    cli("config", "set", "maxTokens", "400")
    for n in range(12):
        cli("add-text", f"note {n}: " + "word " * 20)
    # XML frames each item more heavily than the markdown the window is counted in.
    shown = cli("show", "--format", "xml")
    left_out = [line for line in shown.stderr.splitlines() if "left out" in line]
    assert left_out, shown.stderr
    mentioned = [word for line in left_out for word in line.replace(",", " ").split()]
    ids = [word for word in mentioned if word.startswith("ctx-")]
    assert len(ids) == len(set(ids)), left_out  # no item is explained twice


def test_names_and_words_that_are_not_utf8_are_refused_in_words(cli: Cli) -> None:
    """JSON carries UTF-8 only: a folder or words that are not are said to be, as a
    refusal (with the bytes written as \\xff), never as a traceback."""
    odd = os.fsdecode(bytes(cli.workspace) + b"/caf\xe9")
    os.mkdir(odd)
    os.mkdir(os.path.join(odd, ".git"))
    for args in (("status",), ("add-text", "a note")):
        run = cli(*args, cwd=Path(odd), code=1)
        assert "Traceback" not in run.stderr
        assert "caf\\xe9 is not UTF-8 text" in run.stderr, run.stderr
        error = refusal(cli, *args, cwd=Path(odd))
        assert "caf\\xe9" in error["message"]
    said = cli("add-text", os.fsdecode(b"caf\xe9 au lait"), code=1)
    assert "'caf\\xe9 au lait' is not UTF-8 text" in said.stderr and "Traceback" not in said.stderr


def test_a_new_map_takes_the_old_ones_place_keeps_its_pin_and_says_so(cli: Cli) -> None:
    cli.write("a.py", "def alpha():\n    return beta()\n")
    cli.write("b.py", "def beta():\n    return 2\n")
    first = document(cli, "add", "--map")["items"][0]["id"]
    cli("pin", first)
    cli.write("c.py", "def gamma():\n    return alpha()\n")
    said = cli("add", "--map")
    assert f"it replaces the map {first}, now in the archive" in said.stderr
    assert f"`contextls restore {first}` brings it back" in said.stderr
    maps = [i for i in document(cli, "ls")["items"] if i["metadata"].get("view") == "map"]
    assert len(maps) == 1 and maps[0]["id"] != first and maps[0]["pinned"]
    assert "gamma" in maps[0]["content"]
    again = document(cli, "add", "--map")
    assert again["merged"] == {maps[0]["id"]: again["items"][0]["id"]}
    restored = document(cli, "restore", first)
    assert restored["items"][0]["metadata"]["view"] == "map"
