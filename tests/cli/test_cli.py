"""End-to-end: the installed ``contextls`` executable against the real server.

Each test runs the CLI as a user would, in a temporary workspace with its own
database, and checks what it prints, its exit codes, and that every ``--json``
document decodes into the protocol's types.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import msgspec
import pytest

from contextls.protocol import (
    AddFilesResult,
    AddResult,
    AddTextParams,
    ClearResult,
    ErrorCode,
    ListResult,
    RemoveResult,
    RenderResult,
    Requests,
    RestoreResult,
    SearchResult,
    Status,
    StatusParams,
)
from contextls_client import ContextlsClient
from contextls_client.reports import ConfigReport, ErrorDocument, PinReport, TokensReport
from tests.cli.conftest import Cli

PYTHON_SOURCE = "".join(f"def function_{n}(x):\n    return x + {n}\n\n" for n in range(30))


def ids(listing: ListResult) -> list[str]:
    return [item.id for item in listing.items]


def listed(cli: Cli) -> ListResult:
    return cli("ls", "--json").decode(ListResult)


# ------------------------------------------------------------------ adding and persistence


def test_add_file_and_region_then_list_in_a_later_invocation(cli: Cli) -> None:
    cli.write("src/app.py", PYTHON_SOURCE)
    cli.write("README.md", "# Demo\n\nSome words.\n")

    first = cli("add", "README.md", "src/app.py:4-6")
    assert "added ctx-1 file README.md" in first.stdout
    assert "added ctx-2 code src/app.py:4-6" in first.stdout
    assert "window: 2/50 items" in first.stdout
    assert first.stderr == ""

    listing = listed(cli)
    assert ids(listing) == ["ctx-1", "ctx-2"]
    region = listing.items[1]
    assert region.content == "def function_1(x):\n    return x + 1\n\n"
    assert (region.metadata["startLine"], region.metadata["endLine"]) == (4, 6)

    table = cli("ls").stdout.splitlines()
    assert table[0].split() == ["ID", "KIND", "LABEL", "TOKENS", "FLAGS"]
    assert table[1].split()[:3] == ["ctx-1", "file", "README.md"]
    assert table[2].split()[:3] == ["ctx-2", "code", "src/app.py:4-6"]


def test_ids_keep_counting_across_invocations_and_pins_persist(cli: Cli) -> None:
    cli.write("a.txt", "alpha\n")
    cli.write("b.txt", "beta\n")
    cli("add", "a.txt", "--pin")
    cli("add", "b.txt")
    cli("rm", "ctx-2")
    cli("add", "b.txt")
    listing = listed(cli)
    assert ids(listing) == ["ctx-1", "ctx-3"]
    assert [item.pinned for item in listing.items] == [True, False]
    assert "pinned" in cli("ls").stdout.splitlines()[1]


def test_add_json_shape(cli: Cli) -> None:
    cli.write("a.py", "x = 1\n")
    report = cli("add", "a.py", "--json").decode(AddFilesResult)
    assert [item.id for item in report.items] == ["ctx-1"]
    assert report.refused == [] and report.skipped == []
    assert report.status.item_count == 1


def test_directory_expansion_skips_binaries_and_tool_directories(cli: Cli) -> None:
    for n in range(3):
        cli.write(f"pkg/m{n}.py", f"value = {n}\n")
    cli.write("pkg/node_modules/dep.js", "module.exports = 1\n")
    cli.write("pkg/__pycache__/m0.cpython-311.pyc", "cached\n")
    (cli.workspace / "pkg" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")

    run = cli("add", "pkg")
    assert "pkg/logo.png (binary)" in run.stderr
    assert "pkg/node_modules/ (a tool folder)" in run.stderr  # said, not walked
    labels = [item.label for item in listed(cli).items]
    assert labels == ["pkg/m0.py", "pkg/m1.py", "pkg/m2.py"]


def test_many_files_are_summarised(cli: Cli) -> None:
    for n in range(25):
        cli.write(f"many/f{n:02}.txt", f"file {n}\n")
    run = cli("add", "many/*.txt")
    assert "added 25 items" in run.stdout
    assert "added ctx-1" not in run.stdout  # one line per file would drown the summary
    assert listed(cli).items[-1].label == "many/f24.txt"


def test_add_text_from_argument_and_stdin(cli: Cli) -> None:
    cli("add-text", "remember: the API is v2")
    result = cli("add-text", "--kind", "error", "--json", stdin="Traceback: boom\n").decode(
        AddResult
    )
    assert result.item.kind == "error"
    assert result.item.content.startswith("Traceback: boom")
    repl = cli(
        "add-text", "--kind", "repl-history", "--language", "python", "-", stdin=">>> 1\n1\n"
    )
    assert "added ctx-3 repl-history" in repl.stdout
    kinds = [item.kind for item in listed(cli).items]
    assert kinds == ["text", "error", "repl-history"]


# ------------------------------------------------------------------ show


def test_show_writes_only_the_rendered_context(cli: Cli) -> None:
    cli.write("src/app.py", PYTHON_SOURCE)
    cli("add", "src/app.py:1-2")
    run = cli("show")
    assert run.stderr == ""
    assert run.stdout.startswith("## Context")
    assert "```python\ndef function_0(x):\n    return x + 0\n```" in run.stdout
    rendered = cli("show", "--json").decode(RenderResult)
    assert run.stdout == rendered.text if rendered.text.endswith("\n") else rendered.text + "\n"
    assert rendered.item_ids == ["ctx-1"]


def test_show_formats_and_token_limit(cli: Cli) -> None:
    cli.write("a.txt", "first file\n")
    cli.write("b.txt", "second file " * 200 + "\n")
    cli("add", "a.txt", "b.txt")
    xml = cli("show", "--format", "xml").stdout
    assert xml.lstrip().startswith("<")
    as_json = msgspec.json.decode(cli("show", "--format", "json").stdout)
    assert isinstance(as_json, (dict, list))
    limited = cli("show", "--max-tokens", "60", "--json").decode(RenderResult)
    assert limited.omitted_ids
    assert "left out" in cli("show", "--max-tokens", "60").stderr


def test_show_on_an_empty_window(cli: Cli) -> None:
    run = cli("show")
    assert "empty" in run.stderr


# ------------------------------------------------------------------ budget, eviction, archive


def fill_past_budget(cli: Cli) -> None:
    """Three files of about 200 tokens each (as rendered) in a 450-token window."""
    cli("config", "set", "maxTokens", "450")
    for n in range(3):
        cli.write(f"notes/n{n}.txt", f"note {n} " + "words and more words " * 45 + "\n")
    cli("add", "notes/n0.txt", "notes/n1.txt")


def test_eviction_is_printed_with_the_restore_hint(cli: Cli) -> None:
    fill_past_budget(cli)
    run = cli("add", "notes/n2.txt")
    assert re.search(
        r"evicted ctx-1 \(notes/n0\.txt, [0-9,]+ tokens\) to the archive; "
        r"`contextls restore ctx-1` brings it back",
        run.stderr,
    ), run.stderr
    assert "evicted" not in run.stdout


def test_status_draws_the_budget_and_next_eviction(cli: Cli) -> None:
    fill_past_budget(cli)
    status = cli("status", "--json").decode(Status)
    assert status.max_tokens == 450
    assert status.next_eviction is not None and status.next_eviction.id == "ctx-1"
    text = cli("status").stdout
    assert re.search(r"tokens +\[[█░]{30}\] [0-9,]+ / 450 +\([0-9.]+%\)", text), text
    assert "next out   ctx-1 file notes/n0.txt" in text


def test_search_and_restore(cli: Cli) -> None:
    # Each eviction only what an add needs (stable renders make room in batches).
    cli("config", "set", "renderOrder", "chronological")
    fill_past_budget(cli)
    cli("add", "notes/n2.txt")
    found = cli("search", "note", "0", "--json").decode(SearchResult)
    assert "ctx-1" in [hit.item.id for hit in found.hits]
    assert "ctx-1 file notes/n0.txt" in cli("search", "note 0").stdout

    restored = cli("restore", "ctx-1", "--json")
    result = restored.decode(RestoreResult)
    assert [item.id for item in result.items] == ["ctx-1"]
    assert result.evicted, "restoring into a full window evicts the oldest"
    assert "evicted ctx-2" in restored.stderr
    assert ids(listed(cli))[-1] == "ctx-1"


def test_search_mode_keyword_is_passed_and_reported(cli: Cli) -> None:
    fill_past_budget(cli)
    cli("add", "notes/n2.txt")
    found = cli("search", "note", "0", "--mode", "keyword", "--json").decode(SearchResult)
    assert found.mode == "keyword" and found.hits
    # Each hit says its evidence: the note holding the words has theirs.
    assert all(hit.modes for hit in found.hits)
    assert found.hits[0].item.id == "ctx-1" and "keyword" in found.hits[0].modes
    shown = cli("search", "note 0", "--mode", "keyword").stdout
    # A keyword search finds by words, though the gate weighed the hit's meaning too.
    label = r"\[evicted to stay within maxTokens just now; found by its words(, score [0-9.]+)?\]"
    assert re.search(rf"ctx-1 .*{label}", shown), shown


def test_show_auto_brings_back_what_the_query_means_and_status_says_how(cli: Cli) -> None:
    cli("config", "set", "maxItems", "1")
    cli.write(
        "DEPLOY.md",
        "The deploy pipeline builds the container image, pushes it, then rolls the pods.\n",
    )
    cli("add", "DEPLOY.md")
    cli("add-text", "Meeting notes: we agreed to drop Python 3.9 support.")
    shown = cli("show", "--query", "how are containers deployed", "--auto")
    assert "deploy pipeline" in shown.stdout and "Meeting notes" in shown.stdout
    assert re.search(r"from the archive: ctx-1 \(0\.[0-9]{2}\)", shown.stderr), shown.stderr
    status = cli("status").stdout
    assert re.search(r"search +by words and meaning: 1 archived item embedded", status), status


def test_shrinking_the_window_reports_its_evictions(cli: Cli) -> None:
    for n in range(3):
        cli.write(f"t{n}.txt", f"text {n}\n")
    cli("add", "t0.txt", "t1.txt", "t2.txt")
    run = cli("config", "set", "maxItems", "2")  # one of three: less than half goes at once
    assert "evicted ctx-1" in run.stderr
    assert ids(listed(cli)) == ["ctx-2", "ctx-3"]


def test_a_setting_that_would_evict_most_of_the_window_asks_for_force(cli: Cli) -> None:
    for n in range(4):
        cli.write(f"t{n}.txt", f"text {n}\n")
    cli("add", "t0.txt", "t1.txt", "t2.txt", "t3.txt")

    refused = cli("config", "set", "maxTokens", "10", code=1)  # a typo must not empty it
    assert "setting maxTokens would evict 4 of the window's 4 items" in refused.stderr
    assert "`--force` changes it anyway" in refused.stderr
    assert len(listed(cli).items) == 4
    assert "maxTokens          8,000        default" in cli("config").stdout

    planned = cli("config", "set", "maxItems", "1", "--dry-run")
    assert "would evict 3 items:" in planned.stdout and "ctx-1" in planned.stdout
    assert "the change needs --force" in planned.stdout and len(listed(cli).items) == 4

    forced = cli("config", "set", "maxItems", "1", "--force")
    assert "evicted ctx-1" in forced.stderr and ids(listed(cli)) == ["ctx-4"]


def test_pin_unpin_and_clear_keep_pinned(cli: Cli) -> None:
    cli.write("a.txt", "a\n")
    cli.write("b.txt", "b\n")
    cli("add", "a.txt", "b.txt")
    pinned = cli("pin", "1", "--json").decode(PinReport)
    assert [item.pinned for item in pinned.items] == [True] and pinned.status.pinned_count == 1
    assert "unpinned ctx-1" in cli("unpin", "ctx-1").stdout
    cli("pin", "ctx-2")
    cleared = cli("clear", "--keep-pinned", "--json").decode(ClearResult)
    assert cleared.cleared_ids == ["ctx-1"]
    assert ids(listed(cli)) == ["ctx-2"]
    assert "cleared 1 item to the archive" in cli("clear").stdout
    assert listed(cli).items == []


def test_rm_json_shape(cli: Cli) -> None:
    cli.write("a.txt", "a\n")
    cli("add", "a.txt")
    removed = cli("rm", "ctx-1", "--json").decode(RemoveResult)
    assert removed.removed == ["ctx-1"]
    assert removed.status.item_count == 0


def test_tokens_of_a_file_and_of_stdin(cli: Cli) -> None:
    cli.write("a.txt", "hello world\n")
    from_file = cli("tokens", "a.txt", "--json").decode(TokensReport)
    from_stdin = cli("tokens", "-", "--json", stdin="hello world\n").decode(TokensReport)
    assert [s.source for s in from_file.sources] == ["a.txt"]
    assert [s.source for s in from_stdin.sources] == ["-"]
    assert from_file.total == from_stdin.total > 0
    shown = cli("tokens", "a.txt").stdout.strip()
    assert shown == f"{from_file.total} tokens in gpt-4o (o200k_base), exact"
    assert "gpt-4 (cl100k_base)" in cli("tokens", "a.txt", "--encoding", "cl100k_base").stdout


def test_tokens_compares_models_file_by_file(cli: Cli) -> None:
    cli.write("a.py", "def main() -> None:\n    print('hello, world')\n")
    cli.write("b.md", "# Title\n\nSome prose about CamelCase words.\n")
    models = ["gpt-4o", "claude-opus-4-5", "claude-opus-4.7", "gemini-2.5"]
    asked = [arg for model in models for arg in ("--model", model)]
    report = cli("tokens", "a.py", "b.md", *asked, "--json").decode(TokensReport)
    assert [t.model for t in report.totals] == [
        "gpt-4o",
        "claude-opus-4.5",
        "claude-opus-4.7",
        "gemini-2.5",
    ]
    assert [t.exact for t in report.totals] == [True, True, True, False]
    for total in report.totals:
        assert total.tokens == sum(s.by_model[total.model] for s in report.sources)
    text = cli("tokens", "a.py", "b.md", *asked).stdout
    assert re.search(r"gemini-2.5 \(gemma3-estimate\), estimate \(o200k x 1.17, within", text)
    refused = cli("tokens", "a.py", "--model", "gpt-17", code=1)
    assert "unknown model 'gpt-17'" in refused.stderr


# ------------------------------------------------------------------ config


def test_config_persists_per_workspace(cli: Cli) -> None:
    shown = cli("config", "--json").decode(ConfigReport)
    assert shown.chosen == {} and shown.effective["maxTokens"] == 8000
    cli("config", "set", "max-tokens", "1234")
    cli("config", "set", "evictionPolicy", "relevance")
    report = cli("config", "show", "--json").decode(ConfigReport)
    assert report.chosen == {"maxTokens": 1234, "evictionPolicy": "relevance"}
    assert (report.status.max_tokens, report.status.eviction_policy) == (1234, "relevance")
    text = cli("config").stdout
    assert re.search(r"maxTokens +1,234 +set", text)
    assert re.search(r"maxItems +50 +default", text)

    other = cli.workspace.parent / "other"
    other.mkdir()
    assert cli("status", "--json", cwd=other).decode(Status).max_tokens == 8000
    assert (
        cli("--workspace", str(cli.workspace), "status", "--json", cwd=other)
        .decode(Status)
        .max_tokens
        == 1234
    )

    cli("config", "unset", "maxTokens")
    assert cli("status", "--json").decode(Status).max_tokens == 8000


def test_the_server_refuses_a_budget_below_the_pinned_items(cli: Cli) -> None:
    cli.write("big.txt", "pinned words and more words " * 120 + "\n")
    cli("add", "big.txt", "--pin")
    pinned = cli("status", "--json").decode(Status).tokens
    assert pinned > 500

    run = cli("config", "set", "maxTokens", "500", code=1)
    assert f"{pinned:,} tokens of pinned items" in run.stderr, run.stderr
    assert "unpin some first" in run.stderr
    status = cli("status", "--json").decode(Status)
    assert (status.max_tokens, status.item_count) == (8000, 1)
    assert cli("config", "--json").decode(ConfigReport).chosen == {}


def test_settings_an_older_cli_kept_move_into_the_window(cli: Cli) -> None:
    old = cli.workspace.parent / "state" / "cfg" / "settings.json"
    old.parent.mkdir(parents=True)
    old.write_text(
        json.dumps({"version": 1, "workspaces": {cli.workspace.as_uri(): {"maxItems": 7}}})
    )
    run = cli("status", "--json")
    assert "moved this workspace's settings" in run.stderr and "maxItems=7" in run.stderr
    assert run.decode(Status).max_items == 7
    assert json.loads(old.read_text())["workspaces"] == {}
    again = cli("status", "--json")
    assert again.stderr == "" and again.decode(Status).max_items == 7


# ------------------------------------------------------------------ refusals (exit 1)


def assert_refused(cli: Cli, code: ErrorCode, *args: str) -> str:
    run = cli(*args, code=1)
    assert run.stderr.startswith("contextls: "), run.stderr
    document = cli(*args, "--json", code=1)
    assert set(json.loads(document.stdout)) == {"error"}
    assert set(json.loads(document.stdout)["error"]) == {"code", "message", "data"}
    assert document.decode(ErrorDocument).error.code == code
    return run.stderr


def test_file_outside_the_workspace_is_refused(cli: Cli) -> None:
    outside = cli.workspace.parent / "secret.txt"
    outside.write_text("secret\n")
    message = assert_refused(cli, ErrorCode.OUTSIDE_WORKSPACE, "add", str(outside))
    assert "outside the workspace" in message
    assert_refused(cli, ErrorCode.OUTSIDE_WORKSPACE, "add", str(cli.workspace.parent))
    assert listed(cli).items == []


def test_binary_file_is_refused(cli: Cli) -> None:
    (cli.workspace / "blob.bin").write_bytes(b"\0\1\2\3binary")
    message = assert_refused(cli, ErrorCode.BINARY_FILE, "add", "blob.bin")
    assert "blob.bin" in message and "binary" in message


def test_file_too_big_is_refused(cli: Cli) -> None:
    cli("config", "set", "maxFileBytes", "100")
    cli.write("big.txt", "x" * 500 + "\n")
    cli.write("small.txt", "fine\n")
    message = assert_refused(cli, ErrorCode.FILE_TOO_LARGE, "add", "big.txt")
    assert "big.txt" in message
    # A refusal among several targets does not stop the others.
    run = cli("add", "big.txt", "small.txt", code=1)
    assert "added ctx-1 file small.txt" in run.stdout


def test_missing_file_and_unknown_item_are_refused(cli: Cli) -> None:
    assert_refused(cli, ErrorCode.FILE_NOT_FOUND, "add", "nope.py")
    assert_refused(cli, ErrorCode.UNKNOWN_ITEM, "rm", "ctx-42")
    assert_refused(cli, ErrorCode.UNKNOWN_ITEM, "pin", "ctx-42")


def test_range_past_the_end_of_the_file_is_refused(cli: Cli) -> None:
    cli.write("short.txt", "one\ntwo\n")
    assert_refused(cli, ErrorCode.INVALID_RANGE, "add", "short.txt:10-12")
    cli.write("one.txt", "just one\n")
    said = assert_refused(cli, ErrorCode.INVALID_RANGE, "add", "one.txt:5-9")
    assert "but one.txt has 1 line\n" in said


# ------------------------------------------------------------------ usage errors (exit 2)


def test_usage_errors_exit_2(cli: Cli) -> None:
    cli.write("a.py", "x = 1\n")
    for args in (
        (),
        ("frobnicate",),
        ("add",),
        ("add", "a.py:3-1"),
        ("add", "a.py:0"),
        ("show", "--format", "html"),
        ("show", "--max-tokens", "0"),
        ("show", "--auto"),
        ("config", "set", "maxItems", "zero"),
        ("config", "set", "maxItems", "0"),
        ("config", "set", "colour", "blue"),
        ("add-text", ""),
        ("--workspace", "/does/not/exist", "status"),
    ):
        run = cli(*args, code=2)
        assert run.stdout == "", args
        assert run.stderr, args
        if args:  # --json: one JSON object on stdout, whatever the outcome
            document = cli(*args, "--json", code=2).decode(ErrorDocument)
            assert document.error.code == ErrorCode.INVALID_PARAMS and document.error.message
    assert listed(cli).items == []


def test_refusals_exit_1_and_say_so_in_json(cli: Cli) -> None:
    cli.write("a.py", "x = 1\n")
    assert_refused(cli, ErrorCode.UNKNOWN_ITEM, "rm", "not-in-window.py")
    assert_refused(cli, ErrorCode.UNKNOWN_ITEM, "refresh", "ctx-9")
    refused = cli("add", "nothing/*.py", code=1)
    assert "no file matches" in refused.stderr
    assert "encoding takes one of: o200k_base, cl100k_base" in (
        cli("config", "set", "encoding", "utf8", code=2).stderr
    )


def test_help_and_serve_help(cli: Cli) -> None:
    assert "status" in cli("--help").stdout
    assert "--pin" in cli("add", "--help").stdout
    assert "--stdio" in cli("serve", "--help").stdout


async def test_library_drives_contextls_serve(executable: str, tmp_path: Path) -> None:
    """The client library against ``contextls serve --stdio``: results and notifications."""
    client = ContextlsClient([executable, "serve", "--stdio"], request_timeout=30)
    async with client:
        await client.initialize(tmp_path, {"storage": ":memory:", "maxItems": 1})
        await client.call(Requests.ADD_TEXT, AddTextParams(content="first"))
        result = await client.call(Requests.ADD_TEXT, AddTextParams(content="second"))
        status = await client.call(Requests.STATUS, StatusParams())
    assert [item.id for item in result.evicted] == ["ctx-1"]
    assert status.item_count == 1 and status.max_items == 1
    assert [item.id for notice in client.evictions() for item in notice.items] == ["ctx-1"]
    assert client.latest_status is not None


def test_stdin_that_is_not_utf8_is_added_with_a_note_not_a_traceback(cli: Cli) -> None:

    for command in (["add-text", "--kind", "error"], ["tokens", "-"]):
        run = subprocess.run(
            [cli.executable, "--workspace", str(cli.workspace), *command],
            input=b"Error: caf\xe9\n",
            env=cli.env,
            capture_output=True,
            timeout=60,
        )
        assert run.returncode == 0, run.stderr
        assert b"not valid UTF-8" in run.stderr and b"Traceback" not in run.stderr
    listed = cli("ls", "--json").decode(ListResult)
    assert listed.items[0].content == "Error: caf\ufffd\n"


def test_small_edges_version_empty_search_and_code_text(cli: Cli) -> None:
    assert cli("--version").stdout.startswith("contextls ")
    assert list(json.loads(cli("--json", "--version").stdout)) == ["version"]
    # After other options argparse reads the line: still one JSON object, or words.
    late = cli("--workspace", ".", "--json", "--version").stdout
    assert json.loads(late) == json.loads(cli("--json", "--version").stdout)
    assert cli("--workspace", ".", "--version").stdout.startswith("contextls ")
    empty = cli("search", "", code=2)
    assert "give words to search for" in empty.stderr and "msgspec" not in empty.stderr
    added = cli("add-text", "--kind", "code", "x = 1", "--json").decode(AddResult)
    assert added.item.kind == "code"


# ------------------------------------------------------------------ lifecycle


def test_forget_asks_first_and_then_leaves_no_trace(cli: Cli) -> None:
    secret = "pasted-by-mistake-4242"
    cli("add-text", f"token {secret}")
    cli("add-text", "an ordinary note")
    refused = cli("forget", "--query", secret, code=2)
    assert "cannot be undone" in refused.stderr and "--yes" in refused.stderr
    listed = cli("forget", "--query", secret, "--dry-run").stdout
    assert "would forget 1 item" in listed and "ctx-1" in listed
    done = cli("forget", "--query", secret, "--yes")
    assert "forgot ctx-1" in done.stdout
    assert cli("search", secret, code=1).stderr.startswith("nothing in the archive matches")
    database = Path(cli.env["CONTEXTLS_STORAGE"])
    stored = b"".join(p.read_bytes() for p in database.parent.glob(database.name + "*"))
    assert secret.encode() not in stored and b"an ordinary note" in stored


def test_export_and_import_between_workspaces(cli: Cli) -> None:
    cli.write("src/a.py", "def a():\n    return 1\n")
    cli("add", "src/a.py:1-2", "--pin")
    cli("add-text", "why a returns 1")
    exported = cli.workspace.parent / "context.json"
    cli("export", "--archive", "-o", str(exported))
    other = cli.workspace.parent / "other"
    (other / "src").mkdir(parents=True)
    (other / "src" / "a.py").write_text("def a():\n    return 1\n")
    (other / ".git").mkdir()
    imported = cli("--workspace", str(other), "import", str(exported), cwd=other)
    assert "imported 2 items into the window" in imported.stdout
    assert "ctx-1 -> ctx-1" in imported.stdout
    listed = cli("--workspace", str(other), "ls", "--json", cwd=other).decode(ListResult)
    region = listed.items[0]
    assert region.pinned and region.metadata["uri"] == (other / "src" / "a.py").as_uri()
    broken = cli.workspace.parent / "broken.json"
    broken.write_text('{"format": "contextls-export", "version": 9}')
    refusal = cli("--workspace", str(other), "import", str(broken), cwd=other, code=1)
    assert "version 9" in refusal.stderr


# ------------------------------------------------------------------ which workspace


def test_a_command_in_a_subdirectory_works_on_the_project(cli: Cli) -> None:
    (cli.workspace / ".git").mkdir()
    sub = cli.workspace / "pkg" / "sub"
    cli.write("pkg/sub/mod.py", "x = 1\n")
    added = cli("add", "mod.py", cwd=sub)
    assert "pkg/sub/mod.py" in added.stdout
    assert "pkg/sub/mod.py" in cli("ls", cwd=sub).stdout
    assert "pkg/sub/mod.py" in cli("ls").stdout  # the same window from the root
    status = cli("status", "--json", cwd=sub).decode(Status)
    assert status.workspace == cli.workspace.as_uri()


def test_a_marker_makes_a_folder_its_own_workspace(cli: Cli) -> None:
    (cli.workspace / ".git").mkdir()
    part = cli.workspace / "services" / "api"
    cli.write("services/api/.contextls", "")
    cli.write("services/api/main.py", "app = 1\n")
    cli("add", "main.py", cwd=part)
    assert cli("status", "--json", cwd=part).decode(Status).workspace == part.as_uri()
    assert cli("status", "--json").decode(Status).item_count == 0  # the repository's own window
    other = cli("--workspace", str(part), "ls", cwd=cli.workspace).stdout
    assert "main.py" in other


def test_show_with_a_budget_keeps_pinned_items_and_says_when_they_do_not_fit(cli: Cli) -> None:
    cli.write("pinned.txt", "pinned words and more " * 200 + "\n")  # ~800 tokens
    cli("add", "pinned.txt", "--pin")
    for n in range(4):
        cli.write(f"n{n}.txt", f"note {n} " + "filler words " * 100 + "\n")
        cli("add", f"n{n}.txt")
    shown = cli("show", "--max-tokens", "1200")
    assert "pinned.txt" in shown.stdout and "n3.txt" in shown.stdout
    assert "left out" in shown.stderr and "ctx-1" not in shown.stderr.split("left out")[1]
    too_small = cli("show", "--max-tokens", "300")
    assert "pinned items alone need" in too_small.stderr and "ctx-1" in too_small.stderr


# ------------------------------------------------------------------ ids that moved


def test_a_merged_id_still_names_its_item(cli: Cli) -> None:
    cli.write("uris.py", "".join(f"line {n}\n" for n in range(1, 31)))
    cli("add", "uris.py:1-10", "--pin")
    merged = cli("add", "uris.py:11-20")
    assert "merged ctx-1 into it" in merged.stdout
    pinned = cli("pin", "ctx-1")
    assert "ctx-1 was merged into ctx-2" in pinned.stdout and "pinned ctx-2" in pinned.stdout
    removed = cli("rm", "ctx-1")
    assert "ctx-1 was merged into ctx-2" in removed.stdout and "removed ctx-2" in removed.stdout
    restored = cli("restore", "ctx-1")
    assert "restored ctx-2" in restored.stdout
    again = cli("restore", "ctx-2")
    assert "ctx-2 is already in the window" in again.stdout
    whole = cli("add", "uris.py")
    assert re.search(
        r"merged ctx-2 into it \(pinned, as what it absorbed was: [0-9]+ tokens", whole.stdout
    ), whole.stdout
    assert "pinned ctx-3" in cli("pin", "ctx-1").stdout  # a chain: ctx-1 -> ctx-2 -> ctx-3


def test_the_archive_keeps_one_copy_of_a_text(cli: Cli) -> None:
    cli.write("a.txt", "the same words every time\n")
    for _ in range(3):
        cli("add", "a.txt")
        cli("rm", "a.txt")
    hits = cli("search", "same", "words", "--json").decode(SearchResult).hits
    assert [hit.item.id for hit in hits] == ["ctx-3"]
    assert cli("status", "--json").decode(Status).archived_count == 1
    assert "restored ctx-3" in cli("restore", "ctx-1").stdout


def test_rm_and_pin_take_paths_and_globs(cli: Cli) -> None:
    (cli.workspace / ".git").mkdir()
    cli.write("src/a.py", "a = 1\n")
    cli.write("src/b.py", "b = 2\n")
    cli.write("notes.txt", "keep me\n")
    cli("add", "src/a.py", "src/b.py", "notes.txt")
    assert "pinned ctx-3" in cli("pin", "notes.txt").stdout
    removed = cli("rm", "src/*.py")
    assert "removed ctx-1, ctx-2" in removed.stdout
    assert ids(listed(cli)) == ["ctx-3"]
    nothing = cli("rm", "src/missing.py", code=1)
    assert "no item in the window comes from src/missing.py" in nothing.stderr
    from_inside = cli("unpin", "../notes.txt", cwd=cli.workspace / "src")
    assert "unpinned ctx-3" in from_inside.stdout


# ------------------------------------------------------------------ secrets and hidden files


def test_expansion_skips_secrets_and_says_so_but_a_named_file_goes_with_a_warning(
    cli: Cli,
) -> None:
    cli.write("app.py", "print('hi')\n")
    cli.write(".env", "OPENAI_API_KEY=sk-proj-" + "Ab3" * 15 + "\n")
    cli.write("deploy/server.pem", "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n")
    run = cli("add", ".")
    assert "added ctx-1 file app.py" in run.stdout and ".env" not in run.stdout
    assert "deploy/server.pem (may hold secrets; name it to add it)" in run.stderr
    assert ids(listed(cli)) == ["ctx-1"]
    named = cli("add", "deploy/server.pem")
    assert "added ctx-2" in named.stdout
    assert "seems to contain a private key" in named.stderr and "MIIE" not in named.stderr
    pasted = cli("add-text", "--kind", "error", stdin="auth failed for AKIAIOSFODNN7EXAMPLE\n")
    assert "seems to contain an AWS access key id" in pasted.stderr
    assert "AKIAIOSFODNN7EXAMPLE" not in pasted.stderr


def test_a_directory_and_a_glob_agree_about_hidden_files(cli: Cli) -> None:
    cli.write("src/a.py", "a = 1\n")
    cli.write(".tools/gen.py", "g = 1\n")
    cli.write("src/.cache/c.py", "c = 1\n")
    by_directory = cli("add", ".", "--json").decode(AddFilesResult)
    by_glob_files = {item.metadata["path"] for item in by_directory.items}
    cli("clear")
    globbed = cli("add", "**/*.py", "--json").decode(AddFilesResult)
    assert {item.metadata["path"] for item in globbed.items} == by_glob_files == {"src/a.py"}
    named = cli("add", ".tools", "--json").decode(AddFilesResult)
    assert [item.metadata["path"] for item in named.items] == [".tools/gen.py"]


def test_tokens_counts_several_files_and_totals_them(cli: Cli) -> None:
    cli.write("a.txt", "hello world\n")
    cli.write("b.txt", "one two three four five\n")
    single = cli("tokens", "a.txt", "--json").decode(TokensReport).total
    report = cli("tokens", "a.txt", "b.txt", "-", "--json", stdin="more words\n")
    document = json.loads(report.stdout)
    assert [entry["source"] for entry in document["sources"]] == ["a.txt", "b.txt", "-"]
    assert document["sources"][0]["tokens"] == single
    assert document["total"] == sum(entry["tokens"] for entry in document["sources"])
    text = cli("tokens", "a.txt", "b.txt").stdout
    assert text.splitlines()[-1].startswith("total") and "o200k_base" in text


def test_a_bulk_add_that_would_flush_the_window_needs_force(cli: Cli) -> None:
    cli("config", "set", "maxTokens", "2000")
    cli("config", "set", "renderOrder", "chronological")  # evicting only what it needs
    for n in range(4):
        cli.write(f"old/o{n}.txt", f"old note {n} " + "words " * 120 + "\n")
    cli("add", "old")
    for n in range(6):
        cli.write(f"big/b{n}.txt", f"big file {n} " + "filler words " * 140 + "\n")
    dry = cli("add", "big", "--dry-run")
    assert "would add 6 files" in dry.stdout and "would evict 3 items" in dry.stdout
    assert "the add needs --force" in dry.stdout
    assert ids(listed(cli)) == ["ctx-1", "ctx-2", "ctx-3", "ctx-4"]  # a dry run sends nothing
    refused = cli("add", "big", code=1)
    assert "more than half of it; nothing was added" in refused.stderr
    assert ids(listed(cli)) == ["ctx-1", "ctx-2", "ctx-3", "ctx-4"]
    forced = cli("add", "big", "--force")
    assert "evicted ctx-1" in forced.stderr
    small = cli("add", "old/o0.txt", "old/o1.txt")  # evicts less than half: no question
    assert "added" in small.stdout


def test_a_stable_window_makes_room_in_batches_and_keeps_its_prefix(cli: Cli) -> None:
    """renderOrder stable (the default): an add that needs room for tokens evicts down to
    80 % of the budget, so the adds after it only add to the end of the render."""
    cli("config", "set", "maxTokens", "2000")
    for n in range(12):
        cli("add-text", f"note {n} " + "words " * 200)
    status = cli("status", "--json").decode(Status)
    assert status.evicted_total > 0 and status.tokens <= 2000
    before = cli("show").stdout
    cli("add-text", "one more small note")  # fits in what the batch left: nothing goes
    after = cli("show").stdout
    assert after.startswith(before.removesuffix("\n")), "the render before is a prefix"
    assert cli("status", "--json").decode(Status).evicted_total == status.evicted_total
    cached = cli("status").stdout
    assert "prefix kept: 100% of the last render" in cached, cached


@pytest.mark.parametrize("quick", [True, False], ids=["quick path", "full path"])
def test_an_answer_that_cannot_be_written_is_said_not_a_traceback(cli: Cli, quick: bool) -> None:
    cli("add-text", "a note")  # the daemon runs
    env = {**cli.env, **({} if quick else {"CONTEXTLS_FULL_CLI": "1"})}
    with open("/dev/full", "w") as full:
        run = subprocess.run(
            [cli.executable, "status"],
            cwd=cli.workspace,
            env=env,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert run.returncode == 1
    assert "cannot write its output: No space left on device" in run.stderr
    assert "Traceback" not in run.stderr
    closed = subprocess.run(  # stdout closed: the command runs, nothing to show it on
        [cli.executable, "show"],
        cwd=cli.workspace,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        pass_fds=(),
        preexec_fn=lambda: os.close(1),
    )
    assert "Traceback" not in closed.stderr, closed.stderr
