"""``contextls show --query``: history fills only what the window leaves of the budget."""

from __future__ import annotations

import pytest

from contextls.protocol import RenderResult

from .conftest import Cli

BUDGET = 2000


@pytest.fixture
def archived(cli: Cli) -> Cli:
    """A window of two small files, and an archive holding a huge file and a small note,
    all about passwords. By words only, so what is found does not wait for embeddings."""
    cli.env["CONTEXTLS_SEMANTIC"] = "off"
    cli("config", "set", "maxTokens", str(BUDGET))
    cli.write("big.py", "".join(f"def hide_password_input_{n}(): pass\n" for n in range(400)))
    cli("config", "set", "maxTokens", "100000")
    cli("add", "big.py")
    cli("rm", "big.py")
    cli("config", "set", "maxTokens", str(BUDGET))
    cli("add-text", "to hide password input as it is typed, use getpass")
    cli("rm", "ctx-2")
    cli.write("a.py", "def login(user, password):\n    return check(user, password)\n")
    cli.write("b.py", "def logout(user):\n    pass\n")
    cli("add", "a.py", "b.py")
    return cli


@pytest.mark.parametrize("extra", [(), ("--auto",), ("--max-tokens", "500")])
def test_history_never_takes_the_answer_over_its_budget(
    archived: Cli, extra: tuple[str, ...]
) -> None:
    run = archived("show", "--query", "hide password input", *extra, "--json")
    rendered = run.decode(RenderResult)
    budget = int(extra[1]) if extra[:1] == ("--max-tokens",) else BUDGET
    assert rendered.budget == budget
    assert rendered.tokens <= budget
    left_out = {left.id: left.reason for left in rendered.history_omitted}
    assert "ctx-1" in left_out and left_out["ctx-1"].startswith("over budget: ")
    assert "ctx-2" in rendered.history_ids  # the small note fits beside the window
    assert set(rendered.history_ids).isdisjoint(left_out)


def test_show_says_what_history_it_left_out(archived: Cli) -> None:
    run = archived("show", "--query", "hide password input")
    assert "left out of the relevant history, to stay within 2,000 tokens: ctx-1" in run.stderr
    assert "## Relevant history" in run.stdout
