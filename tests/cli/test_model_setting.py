"""A window for a model: ``config set model``, the status that names it, the counts in it."""

from __future__ import annotations

from contextls_client.reports import ConfigReport
from tests.cli.conftest import Cli

CODE = "def greet(name: str) -> str:\n    return f'Hello, {name}! Welcome back.'\n" * 20


def test_a_window_counts_in_the_tokens_of_the_model_it_is_for(cli: Cli) -> None:
    cli.write("a.py", CODE)
    cli("add", "a.py")
    before = cli("config", "--json").decode(ConfigReport).status
    assert (before.model, before.encoding, before.count_exact) == ("gpt-4o", "o200k_base", True)

    cli("config", "set", "model", "claude-opus-4-7")
    after = cli("config", "--json").decode(ConfigReport)
    assert after.chosen["model"] == "claude-opus-4.7"
    assert (after.status.model, after.status.encoding) == ("claude-opus-4.7", "claude-v4.7")
    shown = cli("show").stdout  # what the model is given, counted in its tokens
    counted = cli("tokens", "-", "--json", stdin=shown).stdout
    claude = int(counted.split('"tokens":')[1].split(",")[0])
    assert after.status.tokens == claude > before.tokens  # every item counted again

    cli("config", "set", "model", "gemini-2.5")
    gemini = cli("config", "--json").decode(ConfigReport).status
    assert not gemini.count_exact and "estimate" in gemini.count_label
    assert "gemini-2.5" in cli("status").stdout

    cli("config", "set", "encoding", "o200k_base")  # the low-level knob clears the model
    back = cli("config", "--json").decode(ConfigReport)
    assert "model" not in back.chosen
    assert (back.status.model, back.status.tokens) == ("gpt-4o", before.tokens)


def test_a_model_nobody_makes_is_refused_with_the_choices(cli: Cli) -> None:
    refused = cli("config", "set", "model", "claude-opus-9-turbo-max", code=1)
    assert "unknown model" in refused.stderr and "claude-opus-4.7" in refused.stderr
    assert cli("config", "--json").decode(ConfigReport).chosen == {}
