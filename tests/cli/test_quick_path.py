"""The quick path (``contextls_client.quick``): the commands people run most, with the
standard library only, printing exactly what the full command line prints."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contextls.common import places, runtime
from contextls.protocol import python_mirror
from contextls_client.quick import understood
from tests.cli.conftest import Cli
from tests.support.rpc import TIMEOUT

COMMANDS = (
    ("status",),
    ("ls",),
    ("show",),
    ("show", "--format", "xml", "--max-tokens", "120"),
    ("show", "--format", "json"),
    ("show", "--query", "parse the numbers", "--auto"),
)


def full(cli: Cli, *args: str, code: int | None = 0) -> tuple[int, str, str]:
    saved = dict(cli.env)
    cli.env["CONTEXTLS_FULL_CLI"] = "1"
    try:
        run = cli(*args, code=code)
    finally:
        cli.env.clear()
        cli.env.update(saved)
    return run.code, run.stdout, run.stderr


def settled(cli: Cli) -> None:
    """Wait until search by meaning has embedded every item (window and archive): what
    ``status`` says of it moves on its own until then (slowly, on a loaded machine)."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        semantic = json.loads(cli("status", "--json").stdout).get("semantic") or {}
        if not semantic.get("pending") and not semantic.get("windowPending"):
            return
        time.sleep(0.1)
    raise AssertionError(f"the embedding backlog never emptied: {semantic}")


def test_the_quick_path_prints_what_the_full_command_line_prints(cli: Cli) -> None:
    (cli.workspace / ".git").mkdir()  # a repository: a command in a folder of it works on it
    cli.write("src/app.py", "".join(f"def f{n}(x):\n    return x + {n}\n\n" for n in range(40)))
    cli("config", "set", "maxTokens", "700")
    cli("add", "src/app.py:1-30", "--pin")
    for n in range(6):
        cli("add-text", f"note {n}: how to parse the numbers " + "word " * 30)
    cli("search", "--wait", "numbers", code=None)
    settled(cli)  # the daemon embeds no more between the two: their statuses are the same
    for args in COMMANDS:
        for output in ((), ("--json",)):
            quick = cli(*args, *output, code=None)
            assert (quick.code, quick.stdout, quick.stderr) == full(cli, *args, *output, code=None)
    subdirectory = cli.workspace / "src"
    assert cli("status", cwd=subdirectory).stdout == cli("status").stdout


def test_a_refusal_on_the_quick_path_is_the_full_paths(cli: Cli, tmp_path: Path) -> None:
    cli("status")
    system = "/etc"  # not a workspace unless allowed
    quick = cli("--workspace", system, "status", "--json", code=None)
    assert quick.code == 1 and json.loads(quick.stdout)["error"]["code"] < 0
    assert (quick.code, quick.stdout, quick.stderr) == full(
        cli, "--workspace", system, "status", "--json", code=None
    )


@pytest.mark.parametrize("command", [["status"], ["add", "a.py"], ["show", "--json"]])
def test_the_quick_path_imports_the_standard_library_only(cli: Cli, command: list[str]) -> None:
    cli.write("a.py", "x = 1\n")
    cli("status")  # the daemon runs this code
    probe = (
        "import sys\n"
        "before = set(sys.modules)\n"  # an editable install's finder loads pathlib at start
        "from contextls_client.cli import main\n"
        f"code = main({command!r})\n"
        "heavy = sorted(m for m in set(sys.modules) - before if m.split('.')[0] in "
        "('msgspec', 'argparse', 'pathlib', 'asyncio', 'platformdirs', 'pygls')"
        " or m.startswith('contextls.protocol'))\n"
        "print(code, heavy, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=cli.workspace,
        env=cli.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stderr.strip().splitlines()[-1] == "0 []", done.stderr


@pytest.mark.parametrize(
    ("arguments", "quick"),
    [
        (["status"], True),
        (["--json", "ls"], True),
        (["-w", "/x", "show", "--max-tokens", "1,000", "--json"], True),
        (["show", "--query", "words", "--auto"], True),
        (["show", "--auto"], False),  # a usage error: argparse says so
        (["show", "--max-tokens", "0"], False),
        (["show", "--format", "html"], False),
        (["ls", "--kind", "code"], False),
        (["status", "--storage", "x.db"], False),
        (["status", "--help"], False),
        (["add", "a.py", "src", "*.md", "--pin", "--force"], True),
        (["add", "a.py:3-5"], False),
        (["add", "a.py::f"], False),
        (["add", "--dry-run", "a.py"], False),
        (["add"], False),
        ([], False),
    ],
)
def test_what_the_quick_path_takes(arguments: list[str], quick: bool) -> None:
    assert (understood(arguments) is not None) == quick


@pytest.mark.parametrize(
    "environment",
    [
        {"XDG_STATE_HOME": "/srv/state", "HOME": "/home/a"},
        {"XDG_STATE_HOME": "", "HOME": "/home/a"},
        {"XDG_STATE_HOME": "relative/state", "HOME": "/home/b/"},
    ],
)
def test_the_plain_state_directory_is_platformdirs(
    environment: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import platformdirs

    monkeypatch.delenv(places.STATE_DIR_ENV, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    plain = runtime.plain_state_dir()
    assert plain is not None and os.path.normpath(plain) == platformdirs.user_state_dir("contextls")


def test_the_python_mirror_is_generated_from_the_protocol() -> None:
    assert python_mirror.MIRROR_PATH.read_text() == python_mirror.render()


def test_an_add_on_the_quick_path_says_what_the_full_path_says(cli: Cli, tmp_path: Path) -> None:
    """The same adds in two like workspaces of one daemon, one each way: the same words,
    the same documents, the same exit codes."""
    roots = {"quick": tmp_path / "one" / "project", "full": tmp_path / "two" / "project"}
    module = "".join(f"def f{n}(x):\n    return x * {n}\n\n" for n in range(60))
    for root in roots.values():
        (root / ".git").mkdir(parents=True)
        (root / "pkg" / "__pycache__").mkdir(parents=True)
        for n in range(4):
            (root / "pkg" / f"m{n}.py").write_text(module.replace("x", f"v{n}"))
        (root / "pkg" / "__pycache__" / "m0.pyc").write_bytes(b"\0")
        (root / "pkg" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0")
        (root / "big.py").write_text(module * 20)
        (root / "note.md").write_text("# a note\n")
        os.mkfifo(root / "pipe")
    cli("config", "set", "maxTokens", "2400", cwd=roots["quick"])
    cli("config", "set", "maxTokens", "2400", cwd=roots["full"])
    adds = (
        ("add", "note.md"),
        ("add", "pkg/m0.py", "big.py", "pipe"),  # a part refused, each by name
        ("add", "big.py", "nothing.py"),  # all refused
        ("add", "pkg", "--json"),  # more than half of the window: refused, with the plan
        ("add", "pkg", "--force"),  # skipped files, evictions
        ("add", "pkg/m*.py", "--pin", "--json"),
        ("add", "note.md", "--json"),
    )
    for args in adds:
        quick = cli(*args, code=None, cwd=roots["quick"])
        saved = dict(cli.env)
        cli.env["CONTEXTLS_FULL_CLI"] = "1"
        try:
            full_run = cli(*args, code=None, cwd=roots["full"])
        finally:
            cli.env.clear()
            cli.env.update(saved)

        def same(text: str, root: Path) -> str:
            text = re.sub(r'"timestamp": [0-9]+', '"timestamp": 0', text)  # when, not what
            return text.replace(root.as_uri(), "<root>").replace(str(root), "<root>")

        ours = (quick.code, same(quick.stdout, roots["quick"]), same(quick.stderr, roots["quick"]))
        theirs = (
            full_run.code,
            same(full_run.stdout, roots["full"]),
            same(full_run.stderr, roots["full"]),
        )
        assert ours == theirs, args
