"""Semantic search over LSP with the real server and the real model (contextls[semantic])."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
from pathlib import Path

import pytest

from contextls.protocol.framing import MessageReader
from tests.support.rpc import frame, read_message, request

from .conftest import SERVER, Session, Starter, stop

NOTES = [
    "The deploy pipeline builds the container image, pushes it, then rolls the pods.",
    "def _backoff_put(url, body):\n    for attempt in range(5):\n        if put(url, body).ok:\n"
    "            return\n        sleep(2 ** attempt)",
    "def render_table(rows):\n    return '\\n'.join(' | '.join(map(str, row)) for row in rows)",
    "def parse_config(path):\n    with open(path) as f:\n        return toml.load(f)",
    "def hash_password(password, salt):\n    return scrypt(password.encode(), salt=salt, n=2**14)",
    "def send_email(to, subject, body):\n    smtp.sendmail(FROM, [to], compose(subject, body))",
    "def resize_image(img, w):\n    return img.resize((w, img.height * w // img.width))",
    "Meeting notes: we agreed to drop Python 3.9 support in the next minor release.",
]
PARAPHRASE = "how are containers deployed"
"""Shares no word with the deploy note (no stemming: "containers" is not "container"),
and is close to it in meaning (cosine ~0.59, above the off-topic floor of 0.44)."""
EXPECTED = "The deploy pipeline"
ARCHIVED = len(NOTES) - 2  # maxItems 2: the last two stay in the window


async def _archive_notes(session: Session) -> None:
    for note in NOTES:
        await session.call("contextls/addText", kind="code", content=note)
    # maxItems 2: all but the last two are archived.


async def _indexed(session: Session) -> dict:
    async def semantic() -> dict:
        return (await session.call("contextls/status"))["semantic"]

    state: dict = {}

    def done() -> bool:
        return bool(state) and state["pending"] == 0 and state["indexed"] >= ARCHIVED

    deadline = 60.0
    waited = 0.0
    while True:
        state = await semantic()
        if done() or waited > deadline:
            break
        await asyncio.sleep(0.2)
        waited += 0.2
    assert done(), state
    return state


def _vector_rows(storage: Path) -> tuple[int, int]:
    with sqlite3.connect(storage) as db:
        count, top = db.execute("SELECT COUNT(*), MAX(rowid) FROM semantic_vectors").fetchone()
    return count, top


async def test_archive_search_by_paraphrase_then_restore(start: Starter) -> None:
    session = await start({"maxItems": 2})
    await _archive_notes(session)
    state = await _indexed(session)
    assert state["available"] and state["model"].startswith("all-MiniLM-L6-v2")
    for mode in ("semantic", "hybrid"):
        found = await session.call("contextls/search", query=PARAPHRASE, mode=mode, limit=3)
        assert found["mode"] == mode
        top = found["hits"][0]
        assert EXPECTED in top["item"]["content"], (mode, found)
        assert "semantic" in top["modes"]
    # Only the close one is offered as an answer, not the rest of the archive.
    found = await session.call("contextls/search", query="hash a password", mode="semantic")
    assert [hit["item"]["content"][:17] for hit in found["hits"]] == ["def hash_password"], found
    keyword = await session.call("contextls/search", query=PARAPHRASE, mode="keyword")
    assert all(EXPECTED not in hit["item"]["content"] for hit in keyword["hits"][:3])
    restored = await session.call("contextls/restore", ids=[top["item"]["id"]])
    assert restored
    listed = await session.call("contextls/list")
    assert top["item"]["id"] in [item["id"] for item in listed["items"]]
    again = await session.call("contextls/search", query=PARAPHRASE, mode="semantic")
    assert top["item"]["id"] not in [hit["item"]["id"] for hit in again["hits"]]


async def test_render_auto_retrieve_reports_history_and_scores(start: Starter) -> None:
    session = await start({"maxItems": 2})
    await _archive_notes(session)
    await _indexed(session)
    rendered = await session.call(
        "contextls/render", query=PARAPHRASE, autoRetrieve=True, maxTokens=4000
    )
    # Only the relevant archived item comes back; the unrelated archived ones stay out.
    assert rendered["historyIds"] == ["ctx-1"], rendered
    assert len(rendered["historyScores"]) == 1
    assert EXPECTED in rendered["text"]
    assert "hash_password" not in rendered["text"]


async def test_vectors_survive_restart_without_recomputing(start: Starter, storage: Path) -> None:
    first = await start({"maxItems": 2})
    await _archive_notes(first)
    await _indexed(first)
    before = _vector_rows(storage)
    await stop(first)
    second = await start({"maxItems": 2})
    state = (await second.call("contextls/status"))["semantic"]
    assert state["pending"] == 0 and state["indexed"] == ARCHIVED
    found = await second.call("contextls/search", query=PARAPHRASE, mode="semantic", limit=1)
    assert EXPECTED in found["hits"][0]["item"]["content"]
    assert _vector_rows(storage) == before, "no vector was written again"


async def test_two_processes_never_embed_one_item_twice(start: Starter, storage: Path) -> None:
    one = await start({"maxItems": 2})
    two = await start({"maxItems": 2})
    await _archive_notes(one)
    await _indexed(one)
    await _indexed(two)
    count, top = _vector_rows(storage)
    # Every item was stored once: a second embedding would replace rows (new rowids).
    assert count == ARCHIVED and top == count


@pytest.mark.parametrize("model", ["missing", "corrupt"])
async def test_bad_model_falls_back_to_keyword_with_a_warning(
    start: Starter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    path = tmp_path / "model.onnx"
    if model == "corrupt":
        path.write_bytes(b"not a model" * 1000)
    monkeypatch.setenv("CONTEXTLS_SEMANTIC_MODEL", str(path))
    session = await start({"maxItems": 2})
    await _archive_notes(session)
    state = (await session.call("contextls/status"))["semantic"]
    assert state["available"] is False and model in state["reason"], state
    found = await session.call("contextls/search", query="_backoff_put", mode="semantic")
    assert found["mode"] == "keyword"
    assert model in found["warning"]
    assert "_backoff_put" in found["hits"][0]["item"]["content"]
    assert (await session.call("contextls/status"))["archivedCount"] == len(NOTES) - 2


def _count(storage: Path, sql: str) -> int:
    with sqlite3.connect(storage) as db:
        try:
            return int(db.execute(sql).fetchone()[0])
        except sqlite3.OperationalError:  # the engine has not added its tables yet
            return 0


async def test_window_items_are_embedded_before_eviction_and_forget_takes_vectors(
    start: Starter, storage: Path
) -> None:
    session = await start({"maxItems": 2})
    await session.call("contextls/addText", kind="code", content=NOTES[0])
    # Once its text has settled and the server is idle, the window item has vectors.
    window_rows = "SELECT count(*) FROM semantic_window WHERE id = 'ctx-1'"
    for _ in range(100):
        if _count(storage, window_rows):
            break
        await asyncio.sleep(0.1)
    assert _count(storage, window_rows) == 1
    for note in NOTES[1:3]:  # ctx-1 is evicted
        await session.call("contextls/addText", kind="code", content=note)
    found = await session.call("contextls/search", query=PARAPHRASE, mode="semantic", limit=1)
    assert found["hits"][0]["item"]["id"] == "ctx-1" and not found.get("warning"), found
    assert _count(storage, "SELECT count(*) FROM semantic_vectors WHERE id = 'ctx-1'") == 1
    assert _count(storage, window_rows) == 0  # moved, not copied twice
    await session.call("contextls/forget", ids=["ctx-1"])
    assert _count(storage, "SELECT count(*) FROM semantic_vectors WHERE id = 'ctx-1'") == 0
    found = await session.call("contextls/search", query=PARAPHRASE, mode="semantic", limit=3)
    assert "ctx-1" not in [hit["item"]["id"] for hit in found["hits"]]


def test_a_window_seeded_at_initialize_does_not_switch_search_by_meaning_off(
    workspace: Path, storage: Path
) -> None:
    """``initializationOptions`` seed the window in a write transaction; the engine making
    its tables meanwhile found the database locked and gave up for the process's life.
    initialize and status go in one write, as the probe sent them."""
    server = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        initialize = request(
            1,
            "initialize",
            {
                "processId": None,
                "capabilities": {},
                "workspaceFolders": [{"uri": workspace.as_uri(), "name": "ws"}],
                "initializationOptions": {"storage": str(storage), "maxItems": 20},
            },
        )
        asked = [request(n, "contextls/status") for n in range(2, 40)]
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(b"".join(frame(message) for message in [initialize, asked[0]]))
        server.stdin.flush()
        reader = MessageReader()
        replies: dict[int, dict] = {}
        for later in asked[1:]:
            while later["id"] - 1 not in replies:
                reply = read_message(reader, server.stdout)
                if isinstance(reply, dict) and "id" in reply:
                    replies[reply["id"]] = reply
            semantic = replies[later["id"] - 1]["result"]["semantic"]
            if semantic["available"]:
                break
            assert semantic["reason"].startswith("starting"), semantic["reason"]
            server.stdin.write(frame(later))
            server.stdin.flush()
        assert semantic["available"], semantic
    finally:
        server.kill()
        server.wait()
