"""The context resource says where its parts that change least end, so an agent's host
can put its prompt-cache markers there (Anthropic's ``cache_control``)."""

from __future__ import annotations

import pytest

from ..cli.conftest import Cli
from .conftest import agent

CONTEXT = "contextls://context/project"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_context_resource_carries_its_cache_breakpoints(project: Cli, mode: str) -> None:
    project("add-text", "the plan we agreed on")
    project("add-text", "an older question")
    project("add-text", "the newest question")
    project("pin", "ctx-1")
    async with agent(project, mode) as client:
        (contents,) = (await client.read_resource(CONTEXT)).contents
    text = contents.text  # type: ignore[union-attr]
    marks = {mark["after"]: mark for mark in (contents.meta or {})["contextls/cacheBreakpoints"]}
    assert set(marks) == {"pinned", "settled", "end"}
    assert marks["end"]["offset"] == len(text)
    pinned, settled = text[: marks["pinned"]["offset"]], text[: marks["settled"]["offset"]]
    # The pinned item leads; every item but the newest is before the settled mark.
    assert "the plan we agreed on" in pinned and "an older question" not in pinned
    assert "an older question" in settled and "the newest question" not in settled
    assert 0 < marks["pinned"]["tokens"] < marks["settled"]["tokens"] < marks["end"]["tokens"]
