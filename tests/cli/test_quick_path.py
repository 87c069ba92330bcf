"""The quick path (``contextls_client.quick``): the commands people run most, with the
standard library only, printing exactly what the full command line prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contextls.common import places, runtime
from contextls.protocol import python_mirror
from contextls_client.quick import understood
from tests.cli.conftest import Cli

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


def test_the_quick_path_prints_what_the_full_command_line_prints(cli: Cli) -> None:
    (cli.workspace / ".git").mkdir()  # a repository: a command in a folder of it works on it
    cli.write("src/app.py", "".join(f"def f{n}(x):\n    return x + {n}\n\n" for n in range(40)))
    cli("config", "set", "maxTokens", "700")
    cli("add", "src/app.py:1-30", "--pin")
    for n in range(6):
        cli("add-text", f"note {n}: how to parse the numbers " + "word " * 30)
    cli("search", "--wait", "numbers", code=None)  # the daemon embeds no more between the two
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


def test_the_quick_path_imports_the_standard_library_only(cli: Cli) -> None:
    cli("status")  # the daemon runs this code
    probe = (
        "import sys\n"
        "before = set(sys.modules)\n"  # an editable install's finder loads pathlib at start
        "from contextls_client.cli import main\n"
        "code = main(['status'])\n"
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
    assert "items      0 / 50" in done.stdout


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
        (["add", "a.py"], False),
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
