"""Search by meaning answers nothing when nothing is close, on a project's real shapes:
empty ``__init__.py`` files, SVGs, code; and its snippets are plain text."""

from __future__ import annotations

import json

import pytest

from contextls.protocol import SearchResult, Status

from .conftest import Cli

SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M12 2L2 7l10 5 10-5'
    '-10-5zm0 13l-10-5v6l10 5 10-5v-6l-10 5z" fill="none" stroke="currentColor"/></svg>\n'
)


@pytest.fixture
def archived_project(cli: Cli) -> Cli:
    for package in ("app", "app/models", "app/views", "app/utils"):
        cli.write(f"{package}/__init__.py", "")
    cli.write("static/logo.svg", SVG)
    cli.write("static/icon.svg", SVG.replace("M12", "M10"))
    cli.write(
        "app/utils/math.py",
        "def ratio(a, b):\n    try:\n        return a / b\n    except ZeroDivisionError:\n"
        "        return 0.0\n",
    )
    cli.write("app/views/login.py", "def login(request):\n    return render(request, 'login')\n")
    cli("add", "app", "static")
    cli("clear")
    return cli


def test_nonsense_finds_nothing_and_says_so(archived_project: Cli) -> None:
    for mode in ("hybrid", "semantic"):
        run = archived_project("search", "--wait", "--mode", mode, "xyzzyplugh", code=1)
        assert "nothing in the archive matches 'xyzzyplugh'" in run.stderr
        assert run.stdout == ""
    status = archived_project("status", "--json").decode(Status)
    assert status.semantic is not None
    assert status.semantic.pending == status.semantic.window_pending == 0


def test_a_forgotten_error_is_not_answered_with_unrelated_files(archived_project: Cli) -> None:
    found = archived_project("search", "--wait", "ZeroDivisionError", "--json")
    hits = found.decode(SearchResult).hits
    assert [hit.item.label for hit in hits] == ["app/utils/math.py"]
    (hit,) = hits
    assert "**" not in hit.snippet
    assert [hit.snippet[start:end] for start, end in hit.highlights] == ["ZeroDivisionError"]
    archived_project("forget", hit.item.id, "--yes")
    gone = archived_project("search", "ZeroDivisionError", "--json", code=1)
    assert json.loads(gone.stdout)["hits"] == []
