"""One add reads its file from disk once, whatever parts of the server look at it.

Finding a definition, cutting it out and following it each want the file's text; within
one request they are given the text read the first time, so the request sees the file as
it was at one moment and the disk is asked once. The server runs with an audit hook (a
``sitecustomize`` on its ``PYTHONPATH``) that writes down every ``open`` of the file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Cli

SOURCE = '''\
import json


class Greeter:
    """Says hello."""

    def greet(self, name: str) -> str:
        return f"hello {name}"

    def part(self) -> str:
        return "bye"


def shout(text: str) -> str:
    return text.upper()
'''

HOOK = """\
import os, sys, traceback

def _opened(event, args):
    if event == "open" and isinstance(args[0], str) and args[0].endswith("/greeter.py"):
        callers = " < ".join(frame.name for frame in traceback.extract_stack()[-8:-1])
        with open(os.environ["OPENS_LOG"], "a") as log:
            log.write(f"{args[0]} by {callers}\\n")

sys.addaudithook(_opened)
"""


@pytest.mark.parametrize(
    "target",
    [
        ["greeter.py::Greeter.greet"],
        ["greeter.py::shout"],
        ["greeter.py:7-8"],
        ["greeter.py"],
        ["--outline", "greeter.py"],
    ],
    ids=["method", "function", "region", "file", "outline"],
)
def test_an_add_opens_its_file_once(cli: Cli, tmp_path: Path, target: list[str]) -> None:
    cli.write("greeter.py", SOURCE)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOOK)
    log = tmp_path / "opens.log"
    cli.env["PYTHONPATH"] = str(hook)
    cli.env["OPENS_LOG"] = str(log)
    cli.env["CONTEXTLS_NO_DAEMON"] = "1"  # the server is this command's own: its opens only

    added = cli("add", *target).stdout
    assert added.startswith("added ctx-1")
    opens = log.read_text().splitlines()
    assert len(opens) == 1, opens  # each names who opened it
