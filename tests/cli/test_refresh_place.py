"""`contextls refresh` reads the lines a person marked, wherever they went.

A region whose own text changed (stale) keeps following its place in the
file; refresh reads the lines it covers now. When that place cannot be told,
refresh says so and reads nothing.
"""

from __future__ import annotations

import json
import time

from tests.support.rpc import TIMEOUT as FOLLOW_WITHIN

from .conftest import Cli


def numbered(count: int) -> list[str]:
    return [f"line_{n}\n" for n in range(1, count + 1)]


def item(cli: Cli) -> dict[str, object]:
    (only,) = json.loads(cli("ls", "--json").stdout)["items"]
    assert isinstance(only, dict)
    return only


def wait_stale(cli: Cli) -> dict[str, object]:
    deadline = time.monotonic() + FOLLOW_WITHIN
    while True:
        found = item(cli)
        if found["stale"] or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_a_stale_region_re_reads_the_lines_that_were_marked(cli: Cli) -> None:
    lines = numbered(30)
    source = cli.write("mod.py", "".join(lines))
    cli("add", "mod.py:10-12")
    lines[10] = "line_11 edited\n"
    source.write_text("".join(lines))
    assert wait_stale(cli)["stale"] is True
    lines.insert(4, "# one more line above\n")
    source.write_text("".join(lines))

    said = cli("refresh").stdout
    refreshed = item(cli)
    assert refreshed["content"] == "line_10\nline_11 edited\nline_12\n"
    assert refreshed["label"] == "mod.py:11-13" and refreshed["stale"] is False
    assert "the text it had is archived as ctx-2; `contextls restore ctx-2`" in said
    found = cli("search", "line_11", "--json").stdout
    assert "line_10\nline_11\nline_12\n" in json.loads(found)["hits"][0]["item"]["content"]


def test_both_changes_between_two_looks_still_find_the_lines(cli: Cli) -> None:
    lines = numbered(30)
    source = cli.write("mod.py", "".join(lines))
    cli("add", "mod.py:10-12")
    lines[10] = "line_11 edited\n"
    lines.insert(4, "# one more line above\n")
    source.write_text("".join(lines))

    cli("refresh")
    assert item(cli)["content"] == "line_10\nline_11 edited\nline_12\n"


def test_when_the_place_cannot_be_told_refresh_asks_instead_of_guessing(cli: Cli) -> None:
    lines = numbered(30)
    source = cli.write("mod.py", "".join(lines))
    cli("add", "mod.py:10-12")
    lines[10] = "line_11 edited\n"
    source.write_text("".join(lines))
    assert wait_stale(cli)["stale"] is True
    # Lines 8-11 rewritten into two: where the region starts now is anyone's guess.
    source.write_text("".join([*lines[:7], "rewritten\n", "twice\n", *lines[11:]]))

    refused = cli("refresh", code=1)
    assert "ctx-1 (mod.py:10-12)" in refused.stderr
    assert "cannot be told" in refused.stderr and "nothing was read again" in refused.stderr
    kept = item(cli)
    assert kept["content"] == "line_10\nline_11\nline_12\n" and kept["stale"] is True
    rendered = cli("show").stdout
    assert "where this is now is not known" in rendered


def test_a_line_edited_right_after_it_was_marked_still_follows(cli: Cli) -> None:
    # Before the daemon's first look at the file: the lines it had at the add decide.
    lines = numbered(30)
    source = cli.write("mod.py", "".join(lines))
    cli("add", "mod.py:10")
    lines[9] = "line_10 edited at once\n"
    lines.insert(2, "# one more line above\n")
    source.write_text("".join(lines))

    cli("refresh")
    refreshed = item(cli)
    assert (refreshed["content"], refreshed["label"]) == ("line_10 edited at once\n", "mod.py:11")
