"""Group commit and the archive's search backlog, against the real server and its SQLite file.

A burst of requests runs under one write lock and is committed together
right before its answers are written; archived rows wait above the mark in
``archive_fts_mark`` and are indexed when the server is idle or before a
search. These tests check what a user relies on: two servers on one database never collide, nothing
answered is lost when the session ends without ``shutdown`` (end of input,
SIGTERM, ``exit``), searches and restores see what the same burst archived,
an idle server empties the backlog, and a schema-1 database is migrated.
The database is inspected with the ``sqlite3`` module, read-only while a
server runs.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.rpc import is_response, request

from .conftest import Starter
from .rawio import RawServers, RawStdio

STATUS = "contextls/didChangeStatus"
EVICT = "contextls/didEvict"
WAITING_FOR_INDEX = (
    "SELECT count(*) FROM archive WHERE rowid > (SELECT indexed_up_to FROM archive_fts_mark)"
)
SHARED_KEYS = ("revision", "itemCount", "tokens", "archivedCount", "evictedTotal", "nextEviction")


@pytest.fixture
def servers(workspace: Path, storage: Path, tmp_path: Path) -> Iterator[RawServers]:
    started = RawServers(workspace, storage, tmp_path / "server.log")
    yield started
    started.close_all()


def read_only(storage: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{storage}?mode=ro", uri=True)


def scalar(db: sqlite3.Connection, sql: str, params: tuple[Any, ...] = ()) -> Any:
    return db.execute(sql, params).fetchone()[0]


def wait_until(predicate: Any, timeout: float = 15.0, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def answers(server: RawStdio, ids: list[int]) -> list[dict[str, Any]]:
    """The replies to ``ids``, in the order they came; fails on any error."""
    wanted = set(ids)
    replies: list[dict[str, Any]] = []
    while len(replies) < len(ids):
        message = server.read()
        if is_response(message) and message["id"] in wanted:
            replies.append(message)
    assert [r["id"] for r in replies] == ids
    for reply in replies:
        assert "result" in reply, reply
    return replies


def content_ids(items: list[dict[str, Any]]) -> list[str]:
    return [item["id"] for item in items]


def check_fts_against_archive(storage: Path) -> None:
    """The search index holds exactly the archive's rows (no duplicate, missing or stale row).

    ``rank = 1`` makes FTS5 compare the index with the external content
    table; the plain 'integrity-check' of SQLite 3.40 misses both a row
    indexed twice and a row never indexed.
    """
    db = sqlite3.connect(storage)
    try:
        assert scalar(db, WAITING_FOR_INDEX) == 0
        db.execute("INSERT INTO archive_fts (archive_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        db.close()


def indexed_ids(db: sqlite3.Connection, word: str) -> list[str]:
    """Archive item ids whose index entries match ``word`` (straight from FTS5)."""
    rows = db.execute(
        "SELECT a.id FROM archive_fts f LEFT JOIN archive a ON a.rowid = f.rowid "
        "WHERE archive_fts MATCH ? ORDER BY f.rowid",
        (word,),
    ).fetchall()
    return [row[0] for row in rows]


# --------------------------------------------------------- two processes


async def test_two_processes_adding_in_turn_and_at_once_never_collide(start: Starter) -> None:
    emacs = await start({"maxItems": 10})
    vscode = await start({"maxItems": 10})
    added: list[dict[str, Any]] = []
    for n in range(20):
        added.append(await emacs.call("contextls/addText", content=f"emacs note {n}"))
        added.append(await vscode.call("contextls/addText", content=f"vscode note {n}"))
    for n in range(5):  # both at once: one waits for the other's lock
        added.extend(
            await asyncio.gather(
                emacs.call("contextls/addText", content=f"emacs burst {n}"),
                vscode.call("contextls/addText", content=f"vscode burst {n}"),
            )
        )
    ids = [result["item"]["id"] for result in added]
    assert len(set(ids)) == len(ids) == 50, ids
    assert set(ids) == {f"ctx-{n}" for n in range(1, 51)}
    revisions = [result["status"]["revision"] for result in added]
    assert len(set(revisions)) == 50, "each change got its own revision"

    emacs_list = (await emacs.call("contextls/list"))["items"]
    vscode_list = (await vscode.call("contextls/list"))["items"]
    assert emacs_list == vscode_list
    assert len(emacs_list) == 10
    emacs_status = await emacs.call("contextls/status")
    vscode_status = await vscode.call("contextls/status")
    assert {k: emacs_status[k] for k in SHARED_KEYS} == {k: vscode_status[k] for k in SHARED_KEYS}
    assert emacs_status["revision"] == max(revisions)
    assert emacs_status["archivedCount"] == emacs_status["evictedTotal"] == 40
    # Both archived into one archive: each evicted note is there once.
    hits = (await vscode.call("contextls/search", query="note", limit=100))["hits"]
    hit_ids = [hit["item"]["id"] for hit in hits]
    assert len(hit_ids) == len(set(hit_ids)) == 40


# --------------------------------------------------- the end of a session


def test_answered_adds_survive_end_of_input_without_shutdown(servers: RawServers) -> None:
    server = servers({"maxItems": 100})
    server.warm_up()
    ids = [server.new_id() for _ in range(30)]
    server.send(
        *[
            request(msg_id, "contextls/addText", {"content": f"eof note {n}"})
            for n, msg_id in enumerate(ids)
        ]
    )
    server.close_stdin()  # right behind the burst: no shutdown, no exit
    replies = [m for m in server.read_until_eof() if is_response(m)]
    assert [r["id"] for r in replies] == ids
    assert server.wait() == 0

    again = servers({"maxItems": 100})
    contents = [item["content"] for item in again.result("contextls/list")["items"]]
    assert contents == [f"eof note {n}" for n in range(30)]
    assert (
        again.result("contextls/status")["revision"] == replies[-1]["result"]["status"]["revision"]
    )


def test_answered_adds_survive_sigterm(servers: RawServers) -> None:
    server = servers({"maxItems": 100})
    server.warm_up()
    for n in range(5):
        server.result("contextls/addText", {"content": f"before term {n}"})
    # Its answer came after its commit; the signal comes right behind it.
    last = server.result("contextls/addText", {"content": "just before the signal"})
    server.terminate()
    assert server.wait() == 0
    server.read_until_eof()

    again = servers({"maxItems": 100})
    contents = [item["content"] for item in again.result("contextls/list")["items"]]
    assert contents == [f"before term {n}" for n in range(5)] + ["just before the signal"]
    assert again.result("contextls/status")["revision"] == last["status"]["revision"]


def test_exit_without_shutdown_ends_with_1_and_still_commits(servers: RawServers) -> None:
    server = servers()
    server.warm_up()
    server.result("contextls/addText", {"content": "kept despite a rude exit"})
    server.send({"jsonrpc": "2.0", "method": "exit"})
    assert server.wait() == 1

    again = servers()
    contents = [item["content"] for item in again.result("contextls/list")["items"]]
    assert contents == ["kept despite a rude exit"]


# ---------------------------------------------- within one burst


def test_search_finds_what_the_same_burst_just_evicted(servers: RawServers, storage: Path) -> None:
    server = servers({"maxItems": 2})
    ids = [server.new_id() for _ in range(5)]
    server.send(
        request(ids[0], "contextls/addText", {"content": "the zebracorn grazes"}),
        request(ids[1], "contextls/addText", {"content": "second"}),
        request(ids[2], "contextls/addText", {"content": "third"}),
        request(ids[3], "contextls/search", {"query": "zebracorn"}),
        request(ids[4], "contextls/render", {"query": "zebracorn"}),
    )
    replies = answers(server, ids)
    assert [item["id"] for item in replies[2]["result"]["evicted"]] == ["ctx-1"]
    hits = replies[3]["result"]["hits"]
    assert [hit["item"]["id"] for hit in hits] == ["ctx-1"]
    assert hits[0]["item"]["content"] == "the zebracorn grazes"
    assert replies[4]["result"]["historyIds"] == ["ctx-1"]
    assert "the zebracorn grazes" in replies[4]["result"]["text"]
    assert server.shutdown_and_exit() == 0
    check_fts_against_archive(storage)


def test_restore_of_what_the_same_burst_archived(servers: RawServers, storage: Path) -> None:
    server = servers({"maxItems": 2})
    ids = [server.new_id() for _ in range(5)]
    server.send(
        request(ids[0], "contextls/addText", {"content": "aardvark comes back"}),
        request(ids[1], "contextls/addText", {"content": "badger"}),
        request(ids[2], "contextls/addText", {"content": "capybara"}),  # evicts ctx-1
        request(ids[3], "contextls/restore", {"ids": ["ctx-1"]}),  # evicts ctx-2
        request(ids[4], "contextls/list", {}),
    )
    replies = answers(server, ids)
    assert content_ids(replies[2]["result"]["evicted"]) == ["ctx-1"]
    restored = replies[3]["result"]
    assert [item["content"] for item in restored["items"]] == ["aardvark comes back"]
    assert content_ids(restored["evicted"]) == ["ctx-2"]
    assert content_ids(replies[4]["result"]["items"]) == ["ctx-3", "ctx-1"]
    final = restored["status"]
    assert final["archivedCount"] == 1

    # One burst: ctx-1 left and came back before the commit, so only ctx-2 is announced.
    while not any(s["revision"] == final["revision"] for s in server.notifications(STATUS)):
        server.read()
    announced = [item["id"] for n in server.notifications(EVICT) for item in n["items"]]
    assert announced == ["ctx-2"]
    # The keyword index is what this checks (hybrid would also find "badger" by meaning).
    assert server.result("contextls/search", {"query": "aardvark", "mode": "keyword"})["hits"] == []
    hits = server.result("contextls/search", {"query": "badger"})["hits"]
    assert [hit["item"]["id"] for hit in hits] == ["ctx-2"]
    assert server.shutdown_and_exit() == 0
    db = read_only(storage)
    try:
        assert [row[0] for row in db.execute("SELECT id FROM archive ORDER BY rowid")] == ["ctx-2"]
    finally:
        db.close()
    check_fts_against_archive(storage)

    again = servers({"maxItems": 2})
    assert content_ids(again.result("contextls/list")["items"]) == ["ctx-3", "ctx-1"]
    status = again.result("contextls/status")
    assert {k: status[k] for k in SHARED_KEYS} == {k: final[k] for k in SHARED_KEYS}


# ------------------------------------------------------- the search backlog


def test_idle_server_indexes_the_backlog(servers: RawServers, storage: Path) -> None:
    server = servers({"maxItems": 3})
    ids = [server.new_id() for _ in range(60)]
    server.send(
        *[
            request(msg_id, "contextls/addText", {"content": f"note with word{n}x"})
            for n, msg_id in enumerate(ids)
        ]
    )
    replies = answers(server, ids)
    evicted = [item["id"] for r in replies for item in r["result"]["evicted"]]
    assert len(evicted) == 57

    db = read_only(storage)
    try:
        # The burst is committed (the archive holds its rows) and, with no search
        # sent, only the idle indexer can have emptied the backlog.
        wait_until(
            lambda: (
                scalar(db, "SELECT count(*) FROM archive") == 57
                and scalar(db, WAITING_FOR_INDEX) == 0
            ),
            what="the idle server to commit and index the archive",
        )
        for n in range(57):
            assert indexed_ids(db, f"word{n}x") == [f"ctx-{n + 1}"], n
        assert indexed_ids(db, "word57x") == []  # still in the window
    finally:
        db.close()
    assert server.process.poll() is None
    assert server.shutdown_and_exit() == 0
    check_fts_against_archive(storage)
