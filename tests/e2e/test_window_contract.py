"""The window contract over LSP: an explicit add of one thing slides the window, an adaptive
budget takes any item that fits its base, a ceiling below its floor is refused, every
eviction a change made is in its answer, and what is rendered is what was counted."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from contextls.protocol import ErrorCode

from .conftest import SERVER, Session, Starter, open_session, stop, window_state

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "


async def count(session: Session, text: str) -> int:
    tokens: int = (await session.call("contextls/countTokens", text=text))["tokens"]
    return tokens


async def note_of(session: Session, tokens: int, tag: str) -> str:
    """A note of about ``tokens`` tokens of text (the words are one token each in o200k)."""
    text = f"{tag} " + WORDS * (tokens // 16 + 1)
    words = text.split()
    while await count(session, " ".join(words)) > tokens:
        words.pop()
    return " ".join(words)


async def test_one_file_named_explicitly_slides_the_window_without_asking(
    start: Starter, workspace: Path
) -> None:
    session = await start({"maxTokens": 600})
    (workspace / "small.py").write_text("".join(f"x{n} = {n}  # {WORDS[:30]}\n" for n in range(30)))
    await session.call("contextls/addText", content=await note_of(session, 260, "first"))
    await session.call("contextls/addText", content=await note_of(session, 140, "second"))
    target = {
        "uri": (workspace / "small.py").as_uri(),
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 12, "character": 0}},
    }
    added = await session.call("contextls/addFiles", targets=[target])  # what the CLI sends
    assert [item["id"] for item in added["evicted"]] == ["ctx-1"], added["evicted"]
    assert added["status"]["tokens"] <= 600
    # Two files that would evict more than half of the window: that is asked first.
    for name in ("one.py", "two.py"):
        (workspace / name).write_text("".join(f"{name[0]}{n} = {n}\n" for n in range(40)))
    both = [{"uri": (workspace / n).as_uri()} for n in ("one.py", "two.py")]
    refused = await session.error("contextls/addFiles", targets=both)
    assert refused.code == ErrorCode.NEEDS_FORCE


async def test_an_adaptive_budget_never_refuses_an_item_that_fits_its_base(
    start: Starter,
) -> None:
    session = await start({"maxTokens": 2000, "budgetPolicy": "adaptive"})
    shrunk = await session.call("contextls/addText", content="a short note")
    assert shrunk["status"]["budget"] < 2000  # light work: the budget took a step down
    big = await note_of(session, 1401, "big")
    added = await session.call("contextls/addText", content=big)
    assert added["item"]["tokens"] > 1401
    status = added["status"]
    assert status["tokens"] <= status["budget"] <= 2000 * 4
    assert any(
        item["id"] == added["item"]["id"]
        for item in (await session.call("contextls/list"))["items"]
    )


async def test_a_ceiling_below_the_floor_is_refused_and_changes_nothing(start: Starter) -> None:
    session = await start({"budgetPolicy": "adaptive"})
    before = (await session.call("contextls/configure"))["settings"]
    refused = await session.error(
        "contextls/configure", settings={"maxTokens": 40000, "budgetCeiling": 12000}
    )
    assert refused.code == -32602
    assert "budgetCeiling 12,000" in refused.message and "20,000" in refused.message
    assert (await session.call("contextls/configure"))["settings"] == before


@pytest.mark.parametrize("fmt", ["markdown", "xml", "json"])
async def test_what_is_rendered_is_what_was_counted(start: Starter, fmt: str) -> None:
    session = await start({"maxTokens": 1000})
    for n in range(50):
        await session.call("contextls/addText", content=f"note {n}: remember the {n}th thing")
    status = await session.call("contextls/status")
    assert status["tokens"] <= 1000
    for max_tokens in (None, 300):
        params: dict[str, Any] = {"format": fmt}
        if max_tokens:
            params["maxTokens"] = max_tokens
        rendered = await session.call("contextls/render", **params)
        counted = await count(session, rendered["text"])
        assert counted == rendered["tokens"] <= (max_tokens or 1000)
        if fmt == "json":
            json.loads(rendered["text"])
        if fmt == "markdown" and max_tokens is None:
            assert counted == status["tokens"] and rendered["omittedIds"] == []
        elif max_tokens is None:
            assert rendered["omittedIds"] and any("left out" in w for w in rendered["warnings"])


async def test_a_change_of_model_counts_in_the_background(start: Starter, workspace: Path) -> None:
    """Claude's tokenizer counts ~0.3 MB/s: the window is counted in a worker thread, and a
    request sent after the change is answered before it (order, not time, is the proof)."""
    session = await start({"maxTokens": 1_000_000, "maxItems": 100})
    body = "".join(f"def function_{n}(value):\n    return value * {n}\n\n" for n in range(700))
    for n in range(12):  # ~300 KB: about a second of Claude's counting on a quiet machine
        await session.call("contextls/addText", kind="code", content=f"# part {n}\n{body}")
    order: list[str] = []

    async def call(name: str, method: str, **params: Any) -> Any:
        result = await session.call(method, **params)
        order.append(name)
        return result

    configured, status = await asyncio.gather(
        call("configure", "contextls/configure", settings={"model": "claude-opus-4.6"}),
        call("status", "contextls/status"),
    )
    assert order == ["status", "configure"], order
    assert configured["status"]["model"] == "claude-opus-4.6"
    assert status["encoding"] == "o200k_base"  # answered before the change
    rendered = await session.call("contextls/render")
    assert rendered["tokens"] == configured["status"]["tokens"]


async def test_a_folder_add_says_what_it_left_out(start: Starter, workspace: Path) -> None:
    pkg = workspace / "pkg"
    for relative in ("a.py", ".venv/lib/x.py", ".venv/lib/y.py", "node_modules/m/i.js", ".dot.py"):
        (pkg / relative).parent.mkdir(parents=True, exist_ok=True)
        (pkg / relative).write_text("x = 1\n")
    session = await start()
    added = await session.call("contextls/addFiles", targets=[{"uri": pkg.as_uri()}])
    assert [item["metadata"]["path"] for item in added["items"]] == ["pkg/a.py"]
    said = {skipped["path"]: skipped["reason"] for skipped in added["skipped"]}
    assert "tool folder" in said["pkg/.venv/"] and "tool folder" in said["pkg/node_modules/"]
    assert "hidden" in said["pkg/.dot.py"]


async def test_last_out_is_what_is_still_out(start: Starter) -> None:
    session = await start({"maxItems": 2})
    for n in range(3):
        await session.call("contextls/addText", content=f"note {n}")
    assert [s["id"] for s in (await session.call("contextls/status"))["lastEvicted"]] == ["ctx-1"]
    restored = await session.call("contextls/restore", ids=["ctx-1"])
    assert [s["id"] for s in restored["status"]["lastEvicted"]] == ["ctx-2"]


async def test_forget_takes_paths_too(start: Starter, workspace: Path) -> None:
    session = await start({"maxItems": 2})
    await session.call("contextls/addFile", uri=session.uri("README.md"))
    await session.call("contextls/addRegion", **session.region("src/app.py", 1, 2))
    await session.call("contextls/addText", content="a note")  # README.md goes to the archive
    dry = await session.call("contextls/forget", paths=["README.md", "src/app.py"], dryRun=True)
    assert sorted(item["label"] for item in dry["forgotten"]) == ["README.md", "src/app.py:1-2"]
    done = await session.call("contextls/forget", paths=[str(workspace / "README.md")])
    assert [item["label"] for item in done["forgotten"]] == ["README.md"]
    assert (await session.call("contextls/search", query="Project"))["hits"] == []
    refused = await session.error("contextls/forget", paths=["/etc/passwd"])
    assert refused.code == -31002  # OUTSIDE_WORKSPACE


async def test_a_settings_change_can_be_rehearsed(start: Starter) -> None:
    """An editor asks before a setting evicts, as before a bulk add: the dry run is the
    change itself, rolled back."""
    session = await start()
    for n in range(4):
        await session.call("contextls/addText", content=f"note {n}")
    before = await session.call("contextls/status")
    dry = await session.call("contextls/configure", settings={"maxItems": 2}, dryRun=True)
    assert dry["dryRun"] and [item["id"] for item in dry["evicted"]] == ["ctx-1", "ctx-2"]
    assert dry["settings"]["maxItems"] == 2
    assert window_state(await session.call("contextls/status")) == window_state(before)
    done = await session.call("contextls/configure", settings={"maxItems": 2})
    assert [item["id"] for item in done["evicted"]] == ["ctx-1", "ctx-2"]


async def test_no_room_says_what_the_folders_left_out(start: Starter, workspace: Path) -> None:
    session = await start({"maxTokens": 90})
    (workspace / "big").mkdir()
    for name in ("a.txt", "b.txt"):  # each fits alone, not both
        (workspace / "big" / name).write_text(WORDS * 2)
    (workspace / "big" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0")
    refused = await session.error("contextls/addFiles", targets=[{"uri": session.uri("big")}])
    assert refused.code == ErrorCode.NO_ROOM
    assert {"path": "big/logo.png", "reason": "binary"} in refused.data["skipped"]


async def test_no_workspace_names_the_folders_it_refused(storage: Path, tmp_path: Path) -> None:
    """An editor can tell a refused folder by the error's data, not by its words."""
    home = Path.home().resolve()
    session = await open_session(SERVER, home, [home], {"storage": str(storage)})
    try:
        refused = await session.error("contextls/status")
        assert refused.code == ErrorCode.NO_WORKSPACE
        [entry] = refused.data["refused"]
        assert entry["folder"] == home.as_uri() and "too wide" in entry["reason"]
    finally:
        await stop(session)
