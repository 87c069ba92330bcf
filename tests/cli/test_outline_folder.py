"""``contextls outline`` of a folder's files: what has nothing to hide stays whole, and the
answer says so; a refusal is for a request where nothing could be outlined."""

from __future__ import annotations

import json

from tests.cli.conftest import Cli

BODY = "".join(f"def step_{n}(value):\n    return value * {n} + {n}\n\n\n" for n in range(12))


def test_a_folder_is_outlined_but_for_a_file_with_nothing_to_hide(cli: Cli) -> None:
    cli.write("pkg/__init__.py", "from .steps import step_1\n")
    cli.write("pkg/steps.py", BODY)
    cli.write("pkg/more.py", BODY.replace("step_", "more_"))
    cli("add", "pkg")
    listed = {item["label"]: item for item in json.loads(cli("ls", "--json").stdout)["items"]}

    run = cli("outline", "pkg")
    assert "showing" in run.stdout and "as its outline" in run.stdout
    (left,) = [line for line in run.stdout.splitlines() if line.startswith("left whole")]
    assert left.startswith("left whole, nothing to hide: ") and "pkg/__init__.py" in left
    answer = json.loads(cli("outline", "pkg", "--json").stdout)  # again: nothing changes
    assert answer["items"] == []
    assert [item["label"] for item in answer["keptWhole"]] == ["pkg/__init__.py"]
    views = {
        item["label"]: item.get("view") for item in json.loads(cli("ls", "--json").stdout)["items"]
    }
    assert views == {
        "pkg/__init__.py": "whole",
        "pkg/steps.py": "outline",
        "pkg/more.py": "outline",
    }
    assert set(views) == set(listed)


def test_a_file_with_nothing_to_hide_alone_is_refused_and_nothing_changes(cli: Cli) -> None:
    cli.write("pkg/__init__.py", "from .steps import step_1\n")
    cli("add", "pkg/__init__.py")
    before = cli("ls", "--json").stdout
    refused = cli("outline", "pkg/__init__.py", code=1)
    assert "has nothing to hide: its outline is all of it" in refused.stderr
    assert cli("ls", "--json").stdout == before
