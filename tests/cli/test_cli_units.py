"""The CLI's pure parts: argument parsing, expansion, settings file, text rendering."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import pytest

from contextls.protocol import (
    ContextItem,
    ItemSummary,
    Position,
    Range,
    SemanticStatus,
    Status,
)
from contextls_client.arguments import build_parser
from contextls_client.commands._ids import item_id
from contextls_client.config_store import ConfigError, ConfigStore, parse_setting
from contextls_client.human import bar, eviction_lines, status_report, table, uri_to_path
from contextls_client.session import UsageError
from contextls_client.targets import AddTarget, LineSpan, TargetError, parse_target


def never_exists(_: str) -> bool:
    return False


# --------------------------------------------------------------------------- targets


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("src/a.py", AddTarget("src/a.py")),
        ("src/a.py:7", AddTarget("src/a.py", LineSpan(7, 7))),
        ("src/a.py:10-24", AddTarget("src/a.py", LineSpan(10, 24))),
        ("a:b/c.py:3-4", AddTarget("a:b/c.py", LineSpan(3, 4))),
        ("src/a.py:", AddTarget("src/a.py:")),
        ("src/a.py:x-2", AddTarget("src/a.py:x-2")),
        ("src/*.py", AddTarget("src/*.py")),
    ],
)
def test_parse_target(text: str, expected: AddTarget) -> None:
    assert parse_target(text, exists=never_exists) == expected


@pytest.mark.parametrize("text", ["a.py:0", "a.py:0-3", "a.py:9-3", "src/*.py:1-2", ""])
def test_parse_target_refuses_nonsense(text: str) -> None:
    with pytest.raises(TargetError):
        parse_target(text, exists=never_exists)


def test_a_file_named_like_a_range_is_taken_whole() -> None:
    assert parse_target("log:12", exists=lambda path: path == "log:12") == AddTarget("log:12")


def test_line_span_covers_through_the_end_of_the_last_line() -> None:
    assert LineSpan(10, 24).to_range() == Range(
        start=Position(line=9, character=0), end=Position(line=24, character=0)
    )
    assert str(LineSpan(3, 3)) == "3"
    assert str(LineSpan(3, 5)) == "3-5"


# --------------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["serve"], []),
        (["serve", "--stdio"], ["--stdio"]),
        (["--json", "serve", "--help"], ["--help"]),
        (["--workspace", "/x", "serve", "--tcp", "h:1"], ["--tcp", "h:1"]),
        (["--storage=/db", "serve"], []),
        (["status"], None),
        (["add", "serve"], None),
        ([], None),
    ],
)
def test_serve_hands_what_argparse_does_not_know_to_the_server(
    argv: list[str], expected: list[str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextls_client import commandline

    handed: list[list[str]] = []
    monkeypatch.setattr(commandline, "_serve", lambda arguments: handed.append(arguments) or 0)
    # No other command may run here.
    monkeypatch.setattr(commandline, "command_handler", {}.__getitem__)
    with contextlib.suppress(KeyError, TypeError):  # another command: no handler here
        commandline.main(argv)
    assert handed == ([] if expected is None else [expected])


def test_global_options_work_before_and_after_the_command() -> None:
    parser = build_parser()
    before = parser.parse_args(["--json", "--workspace", "w", "ls"])
    after = parser.parse_args(["ls", "--json", "--workspace", "w"])
    neither = parser.parse_args(["ls"])
    assert (before.json, before.workspace) == (True, "w")
    assert (after.json, after.workspace) == (True, "w")
    assert (neither.json, neither.workspace, neither.storage) == (False, None, None)


@pytest.mark.parametrize(
    "argv",
    [["show", "--max-tokens", "0"], ["show", "--format", "html"], ["rm"], ["nope"], ["ls", "-x"]],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        build_parser().parse_args(argv)
    assert caught.value.code == 2


@pytest.mark.parametrize(
    ("text", "expected"), [("3", "ctx-3"), ("ctx-12", "ctx-12"), ("007", "ctx-7")]
)
def test_item_ids(text: str, expected: str) -> None:
    assert item_id(text) == expected


@pytest.mark.parametrize("text", ["ctx-", "abc", "ctx-1a", "-1"])
def test_bad_item_ids(text: str) -> None:
    with pytest.raises(UsageError):
        item_id(text)


# --------------------------------------------------------------------------- settings file


def test_config_store_round_trip(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "cfg" / "settings.json")
    assert store.settings_for("file:///a") == {}
    store.set("file:///a", *parse_setting("max-tokens", "1,000"))
    store.set("file:///a", *parse_setting("evictionPolicy", "relevance"))
    store.set("file:///b", *parse_setting("MAXITEMS", "3"))
    assert store.settings_for("file:///a") == {"maxTokens": 1000, "evictionPolicy": "relevance"}
    assert ConfigStore(store.path).settings_for("file:///b") == {"maxItems": 3}
    assert store.unset("file:///b", "maxItems") is True
    assert store.unset("file:///b", "maxItems") is False
    assert store.settings_for("file:///b") == {}


@pytest.mark.parametrize(
    ("name", "value"),
    [("maxItems", "0"), ("maxItems", "many"), ("encoding", "utf-8"), ("colour", "red")],
)
def test_invalid_settings_are_refused(name: str, value: str) -> None:
    with pytest.raises(ConfigError):
        parse_setting(name, value)


def test_corrupt_settings_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="fix or delete"):
        ConfigStore(path).settings_for("file:///a")


# --------------------------------------------------------------------------- expansion


# --------------------------------------------------------------------------- rendering


def test_bar() -> None:
    assert bar(0, 100, width=10) == "░" * 10
    assert bar(50, 100, width=10) == "█" * 5 + "░" * 5
    assert bar(1, 1000, width=10) == "█" + "░" * 9
    assert bar(200, 100, width=4, ascii_only=True) == "####"
    assert bar(5, 0, width=3, ascii_only=True) == "---"


def test_table_aligns_and_shrinks_the_label() -> None:
    lines = table(
        ["ID", "LABEL", "TOKENS"],
        [["ctx-1", "a" * 40, "1,000"], ["ctx-22", "b", "7"]],
        right_aligned=[2],
        shrink_column=1,
        max_width=30,
    )
    assert all(len(line) <= 30 for line in lines)
    assert lines[1].endswith("1,000")
    assert "…" in lines[1]
    assert lines[2].split() == ["ctx-22", "b", "7"]


def summary(number: int) -> ItemSummary:
    return ItemSummary(id=f"ctx-{number}", kind="code", label=f"a.py:{number}", tokens=10)


def make_status(**changes: object) -> Status:
    fields: dict[str, object] = {
        "workspace": "file:///repo%20x",
        "revision": 3,
        "item_count": 2,
        "max_items": 50,
        "tokens": 4000,
        "max_tokens": 8000,
        "percent": 50.0,
        "pinned_count": 1,
        "stale_count": 0,
        "archived_count": 4,
        "evicted_total": 4,
        "encoding": "o200k_base",
        "eviction_policy": "fifo",
        "next_eviction": summary(3),
    }
    fields.update(changes)
    return Status(**fields)  # type: ignore[arg-type]


def test_status_report_shows_bar_counts_and_next_eviction() -> None:
    text = "\n".join(status_report(make_status(), ascii_only=True))
    assert "/repo x" in text
    assert "[" + "#" * 15 + "-" * 15 + "] 4,000 / 8,000  (50.0%)" in text
    assert "next out   ctx-3 code a.py:3 (10 tokens)" in text
    assert "2 / 50" in text


def test_status_report_when_nothing_can_go() -> None:
    text = "\n".join(status_report(make_status(next_eviction=None)))
    assert "every item is pinned" in text
    empty = "\n".join(status_report(make_status(next_eviction=None, item_count=0)))
    assert "the window is empty" in empty


def test_status_report_says_how_the_archive_is_searched() -> None:
    off = SemanticStatus(available=False, reason="the contextls[semantic] extra is not installed")
    text = "\n".join(status_report(make_status(semantic=off)))
    assert (
        "search     by words only: search by meaning is unavailable (the contextls[semantic]"
        in text
    )
    on = SemanticStatus(available=True, indexed=1200, pending=3, model="m")
    text = "\n".join(status_report(make_status(semantic=on)))
    assert "search     by words and meaning: 1,200 archived items embedded, 3 waiting" in text
    assert "search " not in "\n".join(status_report(make_status()))  # a push has no semantic


def test_eviction_lines_name_the_restore_command_and_summarise_long_runs() -> None:
    item = ContextItem(
        id="ctx-3", kind="code", content="x", label="src/a.py:1-20", timestamp=0, tokens=312
    )
    assert eviction_lines([item]) == [
        "evicted ctx-3 (src/a.py:1-20, 312 tokens) to the archive; "
        "`contextls restore ctx-3` brings it back"
    ]
    many = eviction_lines([summary(number) for number in range(1, 41)])
    assert len(many) == 11
    assert many[-1].startswith("evicted 30 more (ctx-11 … ctx-40, 300 tokens)")


def test_uri_to_path() -> None:
    assert uri_to_path("file:///a%20b/c") == "/a b/c"
    assert uri_to_path("untitled:1") == "untitled:1"


def test_mcp_without_the_extra_says_how_to_get_it() -> None:
    # A fresh interpreter where the SDK cannot be imported, as without contextls[mcp].
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "from contextls_client.cli import main\n"
        "sys.exit(main(['mcp']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "pip install 'contextls[mcp]'" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""  # stdout is the protocol's: nothing else may be written there
