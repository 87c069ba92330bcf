"""The tools as a host sees them: what is listed, what each call answers, what it costs.

Each check runs at both eras the Python SDK speaks: the 2025-11-25 handshake and
2026-07-28.
"""

from __future__ import annotations

import json
import re

import pytest

from contextls.app.tokenizers import tokenizer
from contextls.protocol import ITEM_KINDS

from ..cli.conftest import Cli
from .conftest import ERAS, agent, call, refused

TOOLS = {
    "get_context": (True, False),
    "list": (True, False),
    "status": (True, False),
    "search_archive": (True, False),
    "add_file": (False, False),
    "add_region": (False, False),
    "add_symbol": (False, False),
    "add_map": (False, False),
    "add_text": (False, False),
    "restore": (False, False),
    "pin": (False, False),
    "remove": (False, True),
    "refresh": (False, False),
    "expand": (False, False),
    "outline": (False, False),
    "model": (False, False),
}
"""Each tool, with its (readOnlyHint, destructiveHint)."""


@pytest.mark.parametrize("mode", ERAS)
async def test_every_tool_carries_what_hosts_act_on(project: Cli, mode: str) -> None:
    async with agent(project, mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == set(TOOLS)
        for name, (read_only, destructive) in TOOLS.items():
            tool = tools[name]
            hints = tool.annotations
            assert hints is not None, name
            assert (hints.read_only_hint, hints.destructive_hint) == (read_only, destructive)
            assert hints.idempotent_hint is not None and hints.open_world_hint is False, name
            assert tool.title, name
            assert tool.description and "\n " not in tool.description, name
            for parameter, schema in tool.input_schema["properties"].items():
                assert schema.get("description"), f"{name}.{parameter} has no description"
            assert tool.input_schema.get("additionalProperties") is False, name
            assert tool.output_schema is None, name
        region = tools["add_region"].input_schema["properties"]
        assert "1-based" in region["start_line"]["description"]
        assert (
            "tokens" in tools["get_context"].input_schema["properties"]["max_tokens"]["description"]
        )
        kinds = set(tools["add_text"].input_schema["properties"]["kind"]["enum"])
        assert kinds == set(ITEM_KINDS) - {"file", "custom"}
        assert (
            "1 to 100" in tools["search_archive"].input_schema["properties"]["limit"]["description"]
        )


@pytest.mark.parametrize("mode", ERAS)
async def test_an_agent_outlines_expands_and_sets_the_model_every_client_sees(
    project: Cli, mode: str
) -> None:
    async with agent(project, mode) as client:
        await call(client, "add_file", path="app.py")
        whole = project("ls", "--json").decode(dict)["items"][0]["tokens"]
        outlined = await call(client, "outline", ids=["ctx-1"])
        assert outlined.startswith("showing ctx-1 file app.py (") and "as its outline" in outlined
        listed = project("ls", "--json").decode(dict)["items"][0]
        assert listed["view"] == "outline" and listed["tokens"] < whole
        again = await call(client, "outline", ids=["ctx-1"])
        assert again.startswith("nothing changed: ctx-1 already shown as its outline")
        expanded = await call(client, "expand", ids=["ctx-1"])
        assert expanded.startswith("showing ctx-1 file app.py") and "whole" in expanded
        assert project("ls", "--json").decode(dict)["items"][0]["tokens"] == whole

        assert "counts in gpt-4o tokens" in await call(client, "model")
        changed = await call(client, "model", model="claude-opus-4.7")
        assert changed.startswith("the window now counts in claude-opus-4.7 tokens")
        assert project("status", "--json").decode(dict)["model"] == "claude-opus-4.7"
        unknown = await refused(client, "model", model="gpt-17")
        assert "gpt-17" in unknown


@pytest.mark.parametrize("mode", ERAS)
async def test_an_agent_adds_and_reads_back_what_the_cli_sees(project: Cli, mode: str) -> None:
    async with agent(project, mode) as client:
        added = await call(client, "add_region", path="app.py", start_line=4, end_line=5)
        assert added.startswith("added ctx-1 code app.py:4-5")
        assert "window: " in added
        context = await call(client, "get_context")
        assert "app.py:4-5" in context and "def f1():" in context
        assert "app.py:4-5" in project("ls").stdout  # the same window
        listed = await call(client, "list")
        assert listed.splitlines()[0].startswith("ctx-1 code app.py:4-5")
        pinned = await call(client, "pin", id="ctx-1")
        assert pinned.startswith("pinned ctx-1")
        assert "pinned" in (await call(client, "list")).splitlines()[0]
        rendered = await call(client, "get_context")
        # The agent can act on the ids; a pin changes no byte of the context (a prompt
        # cache keeps it): the list and the status say what is pinned.
        assert "ctx-1" in rendered and rendered == context
        status = await call(client, "status")
        assert f"database: {project.env['CONTEXTLS_STORAGE']}" in status
        assert "items: 1 of" in status and "1 pinned" in status
        (project.workspace / "app.py").write_text("def changed():\n    pass\n" * 30)
        refreshed = await call(client, "refresh", ids=["ctx-1"])
        assert refreshed.startswith("read again: ctx-1"), refreshed
        removed = await call(client, "remove", ids=["ctx-1"])
        assert removed.startswith("removed ctx-1 to the archive")
        assert "(the context window is empty)" in await call(client, "get_context")
        prompt = await client.get_prompt("context", {})
        assert "(empty)" in prompt.messages[0].content.text  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ERAS)
async def test_search_and_restore(project: Cli, mode: str) -> None:
    async with agent(project, mode) as client:
        project("config", "set", "maxItems", "1")
        await call(client, "add_text", content="the retry loop backs off exponentially")
        await call(client, "add_text", content="an unrelated note")
        hits = await call(client, "search_archive", query="retry backs")
        assert hits.splitlines()[1].startswith("ctx-1 text"), hits
        assert re.search(r"found by \S*keyword", hits), hits
        meaning = await call(
            client, "search_archive", query="how do failed attempts wait longer", mode="semantic"
        )
        assert "(semantic search)" in meaning and "ctx-1" in meaning, meaning
        restored = await call(client, "restore", ids=["ctx-1"])
        assert "restored ctx-1" in restored and "evicted to the archive: ctx-2" in restored


@pytest.mark.parametrize("mode", ERAS)
async def test_refusals_are_short_and_in_words(project: Cli, mode: str) -> None:
    async with agent(project, mode) as client:
        assert "outside the workspace" in await refused(client, "add_file", path="../x.py")
        assert "missing.py" in await refused(client, "add_file", path="missing.py")
        unknown = await refused(client, "pin", id="ctx-42")
        assert "ctx-42" in unknown and "not in the window" in unknown
        assert "holds secrets" in await refused(client, "add_file", path=".env")
        backwards = await refused(client, "add_region", path="app.py", start_line=5, end_line=2)
        assert "end_line" in backwards
        huge = await refused(client, "add_file", path="x" * 100_000)
        assert len(huge) < 500 and "100,000 characters" in huge
        nul = await refused(client, "add_file", path="app\x00.py")
        assert "NUL" in nul and "Traceback" not in nul
        wrong = await refused(client, "add_region", path="app.py", start_line="one", end_line=2)
        assert wrong.startswith("start_line:") and "further information" not in wrong
        assert "unknown argument 'verbose'" in await refused(client, "status", verbose=True)
        kind = await refused(client, "add_text", content="x", kind="file")
        assert kind.startswith("kind:") and "pydantic" not in kind


@pytest.mark.parametrize("mode", ERAS)
async def test_a_result_costs_its_text_once(project: Cli, mode: str) -> None:
    """What a host forwards to the model: the text content, plus the JSON of any
    structured content. The window's own render is the floor."""
    encoder = tokenizer("o200k_base")
    for n in range(3):
        project.write(
            f"mod{n}.py", "".join(f"def g{n}_{i}(x):\n    return x * {i}\n" for i in range(40))
        )
    async with agent(project, mode) as client:
        for n in range(3):
            await call(client, "add_file", path=f"mod{n}.py")
        forwarded = 0
        for tool, arguments in [("get_context", {}), ("status", {}), ("list", {})]:
            result = await client.call_tool(tool, arguments)
            text = "".join(block.text for block in result.content)  # type: ignore[union-attr]
            forwarded += encoder.count(text)
            if result.structured_content is not None:
                forwarded += encoder.count(json.dumps(result.structured_content))
            if tool == "get_context":
                rendered = encoder.count(text)
        shown = project("show").stdout
        assert rendered <= encoder.count(shown) * 1.05
        assert forwarded < rendered * 1.2, (forwarded, rendered)


@pytest.mark.parametrize("mode", ERAS)
async def test_a_folder_or_glob_is_one_bulk_add(project: Cli, mode: str) -> None:
    for n in range(4):
        project.write(f"pkg/m{n}.py", f"VALUE_{n} = {n}\n" * 10)
    async with agent(project, mode) as client:
        folder = await call(client, "add_file", path="pkg")
        assert folder.startswith("added 4 files"), folder
        project("clear")
        globbed = await call(client, "add_file", path="pkg/m[01].py")
        assert globbed.startswith("added 2 files"), globbed
        project("clear")
        project("config", "set", "maxTokens", "400")
        for n in range(4):
            await call(client, "add_text", content=f"note {n} " + "word " * 85)
        asked = await refused(client, "add_file", path="pkg")
        assert asked.startswith("nothing was added") and "force=true" in asked, asked
        assert re.search(r"would evict [34] items", asked), asked
        forced = await call(client, "add_file", path="pkg", force=True)
        assert forced.startswith("added 4 files") and "evicted" in forced, forced
        project("clear")
        project("config", "set", "maxTokens", "100")
        short = await refused(client, "add_file", path="pkg")
        # The budget less the rendered context's own heading.
        assert re.search(r"take \d+ tokens, and the window leaves 9\d tokens", short), short
        assert "short by" in short
