"""Outlines before eviction, over LSP: with ``compaction: outline`` an add that needs
room first shows the oldest unpinned files as their outlines (each change announced,
the budget never exceeded, pinned items never touched), then evicts if that is not
enough; ``contextls/setView`` shows a file whole again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from .conftest import Session

STDLIB_JSON = Path(json.__file__).parent


def copy(workspace: Path, *names: str) -> None:
    for name in names:
        shutil.copy(STDLIB_JSON / name, workspace / name)


async def items(session: Session) -> dict[str, dict[str, Any]]:
    return {item["id"]: item for item in (await session.call("contextls/list"))["items"]}


async def test_the_oldest_files_become_outlines_before_anything_is_evicted(
    session: Session, workspace: Path
) -> None:
    copy(workspace, "decoder.py", "encoder.py", "__init__.py", "scanner.py")
    await session.call("contextls/configure", settings={"compaction": "outline", "maxTokens": 7000})
    pinned = await session.call("contextls/addFile", uri=session.uri("scanner.py"), pin=True)
    first = await session.call("contextls/addFile", uri=session.uri("decoder.py"))
    second = await session.call("contextls/addFile", uri=session.uri("encoder.py"))
    whole = {r["item"]["id"]: r["item"]["tokens"] for r in (first, second)}
    third = await session.call("contextls/addFile", uri=session.uri("__init__.py"))

    assert third["evicted"] == []
    held = await items(session)
    assert set(held) == {pinned["item"]["id"], *whole, third["item"]["id"]}
    decoder = held[first["item"]["id"]]
    assert decoder["metadata"]["view"] == "outline"
    assert decoder["metadata"]["wholeTokens"] == whole[decoder["id"]] > decoder["tokens"]
    assert "def raw_decode(self, s, idx=0):" in decoder["content"]
    assert "end = _w(s, end).end()" not in decoder["content"]  # a body line
    assert held[pinned["item"]["id"]].get("metadata", {}).get("view") is None
    status = third["status"]
    assert status["tokens"] <= status["maxTokens"]
    announced = [m for m in session.messages if "shown as outline" in m]
    outlined = [i for i in held.values() if i["metadata"].get("view") == "outline"]
    assert len(announced) == len(outlined) >= 1
    assert any(
        f"{decoder['id']} decoder.py shown as outline: {whole[decoder['id']]:,} → "
        f"{decoder['tokens']:,} tokens; `contextls expand {decoder['id']}` shows it whole" in m
        for m in announced
    )

    assert status["outlinedCount"] == len(outlined) and decoder["view"] == "outline"
    markdown = (await session.call("contextls/render"))["text"]
    assert f"(from decoder.py) · {decoder['id']} · outline (no bodies)" in markdown
    xml = (await session.call("contextls/render", format="xml"))["text"]
    assert f'<item id="{decoder["id"]}" kind="file" source="decoder.py"' in xml
    assert 'view="outline"' in xml
    rendered = json.loads((await session.call("contextls/render", format="json"))["text"])
    views = {entry["id"]: entry["view"] for entry in rendered["context"]}
    assert views[decoder["id"]] == "outline" and views[pinned["item"]["id"]] == "whole"

    expanded = await session.call("contextls/setView", ids=[decoder["id"]], view="whole")
    assert expanded["items"][0]["content"] == (workspace / "decoder.py").read_text()
    assert "view" not in expanded["items"][0]["metadata"]
    after = expanded["status"]
    assert after["tokens"] <= after["maxTokens"]
    assert pinned["item"]["id"] in await items(session)


async def test_an_outlined_file_follows_its_file_as_an_outline(
    session: Session, workspace: Path
) -> None:
    copy(workspace, "decoder.py")
    added = await session.call("contextls/addFile", uri=session.uri("decoder.py"), outline=True)
    assert added["item"]["metadata"]["view"] == "outline"
    path = workspace / "decoder.py"
    path.write_text(path.read_text() + "\n\ndef added_later(x):\n    return x * 2\n")
    from .test_live import wait_for_item

    item = await wait_for_item(
        session, added["item"]["id"], lambda i: "def added_later(x):" in i["content"]
    )
    assert "return x * 2" not in item["content"] and item["metadata"]["view"] == "outline"


async def test_without_compaction_an_add_evicts_as_it_always_did(
    session: Session, workspace: Path
) -> None:
    copy(workspace, "decoder.py", "encoder.py", "__init__.py")
    await session.call("contextls/configure", settings={"maxTokens": 7000})
    for name in ("decoder.py", "encoder.py", "__init__.py"):
        last = await session.call("contextls/addFile", uri=session.uri(name))
    assert last["evicted"] and not any("outline" in m for m in session.messages)


async def test_a_class_outline_that_absorbs_its_method_stays_an_outline(
    session: Session, workspace: Path
) -> None:
    copy(workspace, "decoder.py")
    uri = session.uri("decoder.py")
    await session.call("contextls/addSymbolByName", uri=uri, name="JSONDecoder.decode")
    outline = await session.call(
        "contextls/addSymbolByName", uri=uri, name="JSONDecoder", outline=True
    )
    assert outline["merged"] == ["ctx-1"]
    (item,) = (await items(session)).values()
    assert item["view"] == "outline"
    # Signatures and the first line of each docstring, no bodies: not the class's text.
    assert "def decode(self, s, _w=WHITESPACE.match):" in item["content"]
    assert "obj, end = self.raw_decode(s, idx=_w(s, 0).end())" not in item["content"]
    assert "| JSON          | Python            |" not in item["content"]
