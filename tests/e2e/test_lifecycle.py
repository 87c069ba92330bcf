"""The archive's lifecycle over LSP: retention, forgetting for real, export and import."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from contextls.protocol import ErrorCode

from .conftest import TIMEOUT, Session, Starter

UNIQUE = "zebraquartz7781"
"""A word nothing else in a database holds, so its bytes can be looked for in the file."""


async def fill(session: Session, count: int, word: str = "note") -> None:
    for n in range(count):
        await session.call("contextls/addText", kind="text", content=f"{word} {n} " * 20)


async def wait_for_status(session: Session, check: Any, within: float = TIMEOUT) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while True:
        status = await session.call("contextls/status")
        if check(status):
            return status  # type: ignore[no-any-return]
        assert time.monotonic() < deadline, f"the status never got there: {status}"
        await asyncio.sleep(0.1)


def file_bytes(storage: Path) -> bytes:
    return b"".join(
        path.read_bytes() for path in storage.parent.glob(storage.name + "*") if path.is_file()
    )


# ------------------------------------------------------------------ retention


async def test_the_archive_is_pruned_to_its_limit_when_idle(session: Session) -> None:
    configured = await session.call(
        "contextls/configure", settings={"maxItems": 1, "archiveMaxItems": 5}
    )
    assert configured["settings"]["archiveMaxItems"] == 5
    await fill(session, 12)  # 11 go to the archive
    status = await wait_for_status(session, lambda s: s["archivedCount"] == 5)
    assert status["prunedTotal"] == 6
    assert "archiveMaxItems 5" in status["lastPruned"]["why"]
    assert status["archiveBytes"] == sum(len(f"note {n} " * 20) for n in range(6, 11))
    hits = await session.call("contextls/search", query="note")
    assert {hit["item"]["id"] for hit in hits["hits"]} == {f"ctx-{n}" for n in range(7, 12)}


async def test_the_default_keeps_ten_thousand(session: Session) -> None:
    configured = await session.call("contextls/configure")
    assert configured["settings"]["archiveMaxItems"] == 10_000
    assert configured["settings"]["archiveMaxBytes"] == 0  # no limit
    assert configured["settings"]["archiveMaxAgeDays"] == 0


# ------------------------------------------------------------------- forgetting


async def test_forgetting_leaves_no_trace_in_the_database_file(
    session: Session, storage: Path
) -> None:
    await session.call("contextls/configure", settings={"maxItems": 2})
    await session.call("contextls/addText", kind="text", content=f"api key {UNIQUE} oops")
    await fill(session, 3, word="filler")  # the secret is evicted to the archive
    (hit,) = (await session.call("contextls/search", query=UNIQUE))["hits"]
    assert hit["item"]["id"] == "ctx-1"
    await session.call("contextls/addText", kind="error", content=f"trace mentions {UNIQUE}")
    assert UNIQUE.encode() in file_bytes(storage)  # committed: in the database or its WAL

    planned = await session.call("contextls/forget", query=UNIQUE, dryRun=True)
    assert sorted(item["id"] for item in planned["forgotten"]) == ["ctx-1", "ctx-5"]
    assert (await session.call("contextls/status"))["itemCount"] == 2  # a dry run changes nothing

    done = await session.call("contextls/forget", query=UNIQUE)
    assert sorted(item["id"] for item in done["forgotten"]) == ["ctx-1", "ctx-5"]
    assert (await session.call("contextls/search", query=UNIQUE))["hits"] == []
    listed = await session.call("contextls/list")
    assert all(UNIQUE not in item["content"] for item in listed["items"])
    assert UNIQUE.encode() not in file_bytes(storage)


async def test_forgetting_an_unknown_id_changes_nothing(session: Session) -> None:
    await fill(session, 2)
    error = await session.error("contextls/forget", ids=["ctx-1", "ctx-99"])
    assert error.code == ErrorCode.UNKNOWN_ITEM and "ctx-99" in str(error)
    assert (await session.call("contextls/status"))["itemCount"] == 2


# ------------------------------------------------------------ export and import


async def test_export_then_import_into_another_folder(
    start: Starter, workspace: Path, tmp_path: Path
) -> None:
    source = await start({"maxItems": 2})
    await source.call("contextls/addRegion", **source.region("src/app.py", 1, 4))
    await source.call("contextls/addText", kind="error", content="KeyError: 'x'")
    await source.call("contextls/addText", kind="text", content="a later note", pin=True)
    document = await source.call("contextls/export", archive=True)
    assert document["version"] == 1 and len(document["window"]) == 2
    assert [item["id"] for item in document["archive"]] == ["ctx-1"]
    assert "uri" not in document["archive"][0]["metadata"]  # no absolute paths leave

    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "src").mkdir(parents=True)
    (elsewhere / "src" / "app.py").write_text((workspace / "src" / "app.py").read_text())
    target = await start({"maxItems": 2}, root=elsewhere)
    await target.call("contextls/addText", kind="text", content="already here")
    imported = await target.call("contextls/import", document=document)
    assert imported["mapping"] == {"ctx-2": "ctx-2", "ctx-3": "ctx-3", "ctx-1": "ctx-4"}
    assert imported["added"] == ["ctx-2", "ctx-3"] and imported["archived"] == ["ctx-4"]
    assert [item["id"] for item in imported["evicted"]] == ["ctx-1"]  # the limits hold
    restored = await target.call("contextls/restore", ids=["ctx-4"])
    (region,) = restored["items"]
    assert region["metadata"]["uri"] == (elsewhere / "src" / "app.py").as_uri()
    assert region["metadata"]["path"] == "src/app.py"


async def test_a_bad_document_is_refused_and_changes_nothing(session: Session) -> None:
    await fill(session, 1)
    good = await session.call("contextls/export")

    def variant(**changes: Any) -> dict[str, Any]:
        return {**good, **changes}

    newer = await session.error("contextls/import", document=variant(version=2))
    assert newer.code == ErrorCode.INVALID_PARAMS and "version 2" in str(newer)
    item = dict(good["window"][0])
    escaping = {**item, "id": "ctx-50", "metadata": {"path": "../../etc/passwd"}}
    outside = await session.error("contextls/import", document=variant(window=[escaping]))
    assert outside.code == ErrorCode.OUTSIDE_WORKSPACE and "../../etc/passwd" in str(outside)
    huge = {**item, "id": "ctx-51", "content": "x" * 2_000_000}
    too_big = await session.error("contextls/import", document=variant(window=[item, huge]))
    assert too_big.code == ErrorCode.FILE_TOO_LARGE and "ctx-51" in str(too_big)
    status = await session.call("contextls/status")
    assert status["itemCount"] == 1 and status["archivedCount"] == 0
