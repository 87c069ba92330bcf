"""No request stalls the daemon: while one editor's request works, another's is answered.

Two editors on one daemon (``contextls connect --stdio``). Each test sends a heavy
request from the first and, while it is still unanswered, a ``status`` from the second:
the status must come back first (order, not speed: the figures are bench 16's,
``tests/bench/bench_stall.py``). Hostile input gets an answer, never a dropped
connection; a cancelled or superseded request gets its one answer too.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sysconfig
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from contextls.protocol import Notification
from tests.support.rpc import RpcError

from .conftest import Session

REQUEST_CANCELLED = -32800
NO_STRUCTURE = -31016


def repository(root: Path, files: int = 400) -> None:
    """A repository large enough that its map takes a while: modules that call each other."""
    for n in range(files):
        calls = "\n".join(f"    helper_{(n * 7 + k) % files}(value)" for k in range(5))
        body = "".join(
            f"def helper_{n}_{k}(value):\n    '''Step {k}.'''\n    return value + {k}\n\n"
            for k in range(30)
        )
        (root / f"module_{n}.py").write_text(
            f"def helper_{n}(value):\n{calls}\n    return value\n\n\n{body}"
        )


async def answered_first(
    heavy: Session, method: str, params: dict[str, Any], other: Session
) -> Any:
    """Send ``method`` on ``heavy``; while it is unanswered, ``other``'s status must be
    answered. Returns the heavy request's result (or its RpcError)."""
    work = asyncio.ensure_future(heavy.raw(method, params))
    while not heavy.client.in_flight:  # written
        await asyncio.sleep(0.001)
    status = await other.call("contextls/status")
    assert not work.done(), "the heavy request was answered before the other client's status"
    assert status["workspace"]
    try:
        return await work
    except RpcError as error:
        return error


async def test_a_map_of_a_repository_leaves_room_for_another_client(
    editors: list[Session], workspace: Path
) -> None:
    repository(workspace)
    first, second = editors
    result = await answered_first(first, "contextls/addMap", {"query": "helper"}, second)
    item = result["item"]
    assert item["view"] == "map" and "helper_" in item["content"]
    assert item["metadata"]["definitions"] > 0


async def test_a_count_of_a_long_text_leaves_room_for_another_client(
    editors: list[Session],
) -> None:
    first, second = editors
    prose = "The quick brown fox jumps over the lazy dog, again and again. " * 17_000
    result = await answered_first(
        first, "contextls/countTokens", {"text": prose, "models": ["claude-opus-4.7"]}, second
    )
    assert result["tokens"] > 100_000 and result["model"] == "claude-opus-4.7"


async def test_an_outline_of_a_large_file_leaves_room_for_another_client(
    editors: list[Session], workspace: Path
) -> None:
    # ~700 KB whose outline fits the default budget: 240 definitions of long bodies.
    steps = "".join(f"    value = value * 3 + {k}  # one step of many\n" for k in range(70))
    body = "".join(
        f"def function_{n}(value, other=None):\n{steps}    return value + {n}\n\n"
        for n in range(240)
    )
    (workspace / "big_module.py").write_text(body)
    first, second = editors
    uri = (workspace / "big_module.py").as_uri()
    result = await answered_first(first, "contextls/addFile", {"uri": uri, "outline": True}, second)
    assert not isinstance(result, RpcError), result
    item = result["item"]
    assert item["metadata"]["view"] == "outline"
    assert "def function_239(value, other=None):" in item["content"]
    assert "return value + 239" not in item["content"]


async def test_unclosed_brackets_are_read_as_lines_with_the_reason(
    editors: list[Session], workspace: Path
) -> None:
    (workspace / "brackets.py").write_text("[" * 100_000)
    (workspace / "fine.py").write_text("def fine():\n    return 1\n")
    first, second = editors
    uri = (workspace / "brackets.py").as_uri()
    at = await first.call("contextls/symbolAt", uri=uri, position={"line": 0, "character": 9})
    assert at["symbol"] is None and "100,000 deep" in at["reason"]
    refused = await first.error("contextls/addSymbolByName", uri=uri, name="f")
    assert "100,000 deep" in refused.message and "lines" in refused.message
    mapped = await first.call("contextls/addMap")
    *listed, last = mapped["item"]["content"].rstrip("\n").splitlines()
    assert "fine" in "\n".join(listed) and "brackets.py" not in "\n".join(listed)
    assert last == (
        "⋮ 1 file could not be read for the map "
        "(brackets nested 100,000 deep (more than 1,000): brackets.py)"
    )
    assert (await second.call("contextls/status"))["itemCount"] == 1


async def test_a_million_spaces_are_answered(editors: list[Session]) -> None:
    """tiktoken panics on such a run (a BaseException): the connection stayed up and the
    count is exact (one token per 128 spaces in o200k)."""
    first, second = editors
    counted = await first.call("contextls/countTokens", text=" " * 1_000_000, encoding="o200k_base")
    assert counted["tokens"] == 7_813
    assert (await first.call("contextls/status"))["itemCount"] == 0
    assert (await second.call("contextls/status"))["itemCount"] == 0


async def test_a_cancelled_map_is_answered_as_cancelled_and_changes_nothing(
    editors: list[Session], workspace: Path
) -> None:
    repository(workspace)
    first, second = editors
    work = asyncio.ensure_future(first.raw("contextls/addMap", {}))
    while not first.client.in_flight:  # written
        await asyncio.sleep(0.001)
    (msg_id,) = first.client.in_flight
    first.client.notify("$/cancelRequest", {"id": msg_id})
    try:
        await work
        raise AssertionError("a cancelled map was added")
    except RpcError as error:
        assert error.code == REQUEST_CANCELLED and "cancelled" in error.message
    status = await second.call("contextls/status")
    assert status["itemCount"] == 0 and status["mapCount"] == 0


def adds_and_renders() -> list[tuple[str, Any]]:
    """220 adds, each followed by a render of the window it grew: short, so the write
    reaches the daemon in one read (a pipe holds 64 KiB)."""
    return [
        ("contextls/addText", {"content": f"note {n}"}) if odd == 0 else ("contextls/render", {})
        for n in range(220)
        for odd in (0, 1)
    ]


async def started(
    burst: Coroutine[Any, Any, list[Any]], sender: Session
) -> asyncio.Future[list[Any]]:
    """The burst written: its requests are in flight."""
    running = asyncio.ensure_future(burst)
    while not sender.client.in_flight:
        await asyncio.sleep(0.001)
    return running


async def test_a_burst_of_requests_in_one_write_leaves_room_for_another_client(
    editors: list[Session],
) -> None:
    """A client that pipelines hundreds of adds and renders in one write: another client's
    change is made between them, not after the last (its status push reaches the first
    client while some of them are still unanswered: one connection keeps the order the
    daemon wrote in); each is answered, in order."""
    first, second = editors
    marked = 123_457  # the other client's change, as the pushes tell it
    in_flight_then: list[int] = []

    class Noting(list[Any]):
        def append(self, params: Any) -> None:
            super().append(params)
            if params.get("maxTokens") == marked:
                in_flight_then.append(len(first.client.in_flight))

    first.client.kept[Notification.DID_CHANGE_STATUS] = Noting()
    await first.call("contextls/configure", settings={"maxItems": 1000})
    burst = await started(first.client.burst(adds_and_renders()), first)
    await second.call("contextls/configure", settings={"maxTokens": marked})
    results = await burst
    await first.wait_for(lambda: bool(in_flight_then))
    assert in_flight_then[0] > 0, "the other client's change waited for the whole burst"
    assert [result["item"]["label"] for result in results[-4::2]] == ["note 218", "note 219"]
    assert "note 219" in results[-1]["text"]
    listed = await first.call("contextls/list")
    assert listed["items"][-1]["content"] == "note 219"


def spawned_children(pid: int) -> list[int]:
    """The processes ``pid`` started with multiprocessing's spawn (not its resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        parent = int(stat.rpartition(")")[2].split()[1])
        if parent == pid and "spawn_main" in command and "resource_tracker" not in command:
            found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    """``pid`` is a process that has not ended (an ended one may wait to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


async def test_a_map_whose_process_dies_is_answered_and_the_next_map_is_made(
    editors: list[Session], workspace: Path
) -> None:
    repository(workspace)
    first, second = editors
    daemon = (await second.call("contextls/serverInfo"))["pid"]
    work = asyncio.ensure_future(first.raw("contextls/addMap", {}))
    while not (ranking := spawned_children(daemon)):  # the map's own process
        assert not work.done(), await work
        await asyncio.sleep(0.001)
    while not (parsers := [child for pid in ranking for child in spawned_children(pid)]):
        assert not work.done(), await work
        await asyncio.sleep(0.001)
    for pid in ranking:
        os.kill(pid, signal.SIGKILL)
    try:
        await work
        raise AssertionError("a map was added though its process was killed")
    except RpcError as error:
        assert error.code == NO_STRUCTURE and "map's process stopped" in error.message
    # Its parsing workers, orphaned, see their parent gone and end (not wait forever).
    while any(running(pid) for pid in parsers):
        await asyncio.sleep(0.05)
    assert (await second.call("contextls/status"))["mapCount"] == 0
    again = await first.call("contextls/addMap", query="helper")
    assert "helper_" in again["item"]["content"]
    assert (await second.call("contextls/status"))["mapCount"] == 1


async def test_a_newer_map_supersedes_one_still_being_made(
    editors: list[Session], workspace: Path
) -> None:
    repository(workspace)
    first, _ = editors
    older = asyncio.ensure_future(first.raw("contextls/addMap", {"query": "older"}))
    while not first.client.in_flight:  # written
        await asyncio.sleep(0.001)
    newer = await first.call("contextls/addMap", query="helper_3")
    try:
        await older
        raise AssertionError("the older map was added too")
    except RpcError as error:
        assert error.code == REQUEST_CANCELLED and "superseded" in error.message
    assert newer["item"]["metadata"]["query"] == "helper_3"
    assert (await first.call("contextls/status"))["mapCount"] == 1


async def test_a_map_reports_its_progress_under_the_clients_token(
    editors: list[Session], workspace: Path
) -> None:
    repository(workspace, files=120)
    first, _ = editors
    progress = first.client.keep("$/progress")
    await first.call("contextls/addMap", workDoneToken="map-1")
    kinds = [message["value"]["kind"] for message in progress]
    assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds, kinds
    assert {message["token"] for message in progress} == {"map-1"}
    last = [m["value"] for m in progress if m["value"]["kind"] == "report"][-1]
    done, _, total = last["message"].removesuffix(" files").partition(" of ")
    assert last["percentage"] == 100 and done == total and int(total) >= 120, last


async def test_a_folder_add_reports_its_progress(editors: list[Session], workspace: Path) -> None:
    folder = workspace / "notes"
    folder.mkdir()
    for n in range(30):
        (folder / f"note_{n}.md").write_text(f"note {n}\n")
    first, _ = editors
    progress = first.client.keep("$/progress")
    added = await first.call(
        "contextls/addFiles", targets=[{"uri": folder.as_uri()}], workDoneToken=7, force=True
    )
    assert len(added["items"]) == 30
    kinds = [message["value"]["kind"] for message in progress]
    assert kinds[0] == "begin" and kinds[-1] == "end", kinds


async def test_a_dry_run_of_another_model_leaves_room_for_another_client(
    editors: list[Session],
) -> None:
    """Counting the window in Claude's tokens (~0.3 MB/s) for a rehearsal of the change."""
    first, second = editors
    await first.call("contextls/configure", settings={"maxTokens": 2_000_000})
    prose = "The quick brown fox jumps over the lazy dog, again and again. " * 9_000
    await first.call("contextls/addText", kind="text", content=prose)
    result = await answered_first(
        first,
        "contextls/configure",
        {"settings": {"model": "claude-opus-4.7"}, "dryRun": True},
        second,
    )
    assert result["dryRun"] is True and result["changed"] == ["model", "encoding"]
    status = await second.call("contextls/status")
    assert status["model"] == "gpt-4o"  # rehearsed, not changed


async def changed_meanwhile(
    heavy: Session, method: str, params: dict[str, Any], other: Session, head_start: float = 0.0
) -> Any:
    """Send ``method`` on ``heavy``; while it is unanswered, ``other`` adds a note, and the
    status that change pushes must reach ``heavy`` before its answer does (on one
    connection, in the order the daemon wrote them). For a request whose answer is large,
    where another client's reply can overtake the answer on its way: the push shows the
    change was made before the heavy request's work ended. ``head_start``: seconds the
    heavy request has to reach the daemon first, for one whose work starts a turn after it
    is read (an async handler): the change could otherwise be made before it starts."""
    pushes = heavy.client.kept[Notification.DID_CHANGE_STATUS]
    answered_before: list[bool] = []

    class Noting(list[Any]):
        def append(self, params: Any) -> None:
            super().append(params)
            answered_before.append(not heavy.client.in_flight)

    noting = heavy.client.kept[Notification.DID_CHANGE_STATUS] = Noting(pushes)
    work = asyncio.ensure_future(heavy.raw(method, params))
    while not heavy.client.in_flight:  # written
        await asyncio.sleep(0.001)
    await asyncio.sleep(head_start)
    await other.call("contextls/addText", content="a note while the other editor waits")
    await heavy.wait_for(lambda: len(noting) > len(pushes))
    result = await work
    assert answered_before and not answered_before[0], "the heavy request was answered first"
    return result


async def test_a_render_of_a_large_window_leaves_room_for_another_client(
    editors: list[Session], workspace: Path
) -> None:
    """The standard library's modules and four of its packages in the window (~400 files,
    7 MB of code nobody here wrote): drawing and counting them held every client ~1 s."""
    first, second = editors
    await first.call("contextls/configure", settings={"maxTokens": 2_000_000, "maxItems": 500})
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for module in sorted(stdlib.glob("*.py")):
        shutil.copyfile(module, workspace / module.name)
    for package in ("asyncio", "email", "unittest", "idlelib"):
        shutil.copytree(
            stdlib / package, workspace / package, ignore=shutil.ignore_patterns("*.pyc")
        )
    added = await first.call("contextls/addFiles", targets=[{"uri": str(workspace)}], force=True)
    result = await changed_meanwhile(first, "contextls/render", {}, second)
    assert result["itemIds"] == [item["id"] for item in added["items"]]
    assert not result["omittedIds"] and result["tokens"] > 1_000_000


async def test_a_long_conversation_is_counted_leaving_room_for_another_client(
    editors: list[Session], workspace: Path
) -> None:
    """500 messages of ~2 KB of the standard library's code, in Claude's tokens."""
    first, second = editors
    await first.call("contextls/configure", settings={"model": "claude-opus-4.7"})
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    code = "".join(module.read_text() for module in sorted(stdlib.glob("*.py"))[:60])
    messages = [
        {
            "role": "user" if n % 2 == 0 else "assistant",
            "content": code[n * 2_000 : (n + 1) * 2_000],
        }
        for n in range(500)
    ]
    params = {"workspace": str(workspace), "messages": messages, "contextWindow": 200_000}
    # Counting them takes seconds; the change comes a moment after the request.
    result = await changed_meanwhile(
        first, "contextls/prepareConversation", params, second, head_start=0.2
    )
    assert result["truncated"] and result["prevContextTokens"] > 200_000, result[
        "prevContextTokens"
    ]


async def test_outlines_of_many_files_leave_room_for_another_client(
    editors: list[Session], workspace: Path
) -> None:
    """The standard library's modules with functions (~150 files, 4 MB), shown as outlines
    at once and whole again."""
    first, second = editors
    await first.call("contextls/configure", settings={"maxTokens": 2_000_000, "maxItems": 500})
    for module in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        if "\ndef " in module.read_text(errors="replace"):
            shutil.copyfile(module, workspace / module.name)
    added = await first.call("contextls/addFiles", targets=[{"glob": "*.py"}], force=True)
    ids = [item["id"] for item in added["items"]]
    params = {"ids": ids, "view": "outline"}
    outlined = await changed_meanwhile(first, "contextls/setView", params, second, head_start=0.1)
    assert [item["id"] for item in outlined["items"]] == ids
    assert all(item["view"] == "outline" for item in outlined["items"])
    whole = await first.call("contextls/setView", ids=ids, view="whole")
    assert all(item["view"] == "whole" for item in whole["items"])


async def test_the_first_search_loads_its_model_leaving_room_for_another_client(
    editors: list[Session],
) -> None:
    """Search by meaning loads its model at a process's first search (~0.5 s)."""
    pytest.importorskip("onnxruntime")
    first, second = editors
    result = await answered_first(
        first, "contextls/search", {"query": "where do we retry uploads"}, second
    )
    assert result["mode"] == "hybrid" and result["hits"] == []


async def test_a_forget_answers_after_its_scrub_and_other_requests_go_between(
    editors: list[Session],
) -> None:
    """A forget commits its deletes in one turn and scrubs the file at a later one: the
    requests another client sent meanwhile are answered between the two (a change of
    the other's reaches the first client after the forget's own push and before its
    answer, one connection keeping the order the daemon wrote in), not after both."""
    first, second = editors
    await first.call("contextls/configure", settings={"maxItems": 3})
    for n in range(40):
        await first.call("contextls/addText", content=f"forgettable {n} " + "words " * 200)
    await first.call("contextls/configure", settings={"maxItems": 1000})
    archived = (await first.call("contextls/status"))["archivedCount"]
    assert archived == 37
    seen: list[tuple[int, int]] = []  # (archived count, requests of the first in flight)

    class Noting(list[Any]):
        def append(self, params: Any) -> None:
            super().append(params)
            seen.append((params["archivedCount"], len(first.client.in_flight)))

    first.client.kept[Notification.DID_CHANGE_STATUS] = Noting()
    burst = await started(second.client.burst(adds_and_renders()), second)
    forgot = await first.call("contextls/forget", query="forgettable")
    await burst
    assert len(forgot["forgotten"]) == 40 and forgot["status"]["archivedCount"] == 0
    before_its_answer = [count for count, in_flight in seen if count == 0 and in_flight]
    # Its own push, then at least one of the other's changes, before its answer.
    assert len(before_its_answer) > 1, "the other's requests waited for the scrub"


@pytest.fixture
def keyword_search_only(env: dict[str, str]) -> None:
    """The daemon searches by words alone: a search has nothing to prepare in a thread."""
    env["CONTEXTLS_SEMANTIC"] = "off"


async def test_a_search_catches_the_keyword_index_up_in_turns(
    keyword_search_only: None, editors: list[Session]
) -> None:
    """Notes archived in a stream that never leaves the daemon idle wait for the keyword
    index; the search that comes next indexes them a batch a turn, and the requests
    behind it are answered meanwhile (the add sent after it is answered first), not
    after the whole backlog was indexed in one turn."""
    first, _ = editors
    await first.call("contextls/configure", settings={"maxItems": 1})
    await first.call("contextls/search", query="nothing")  # finds search by meaning off
    frames: list[tuple[str, Any]] = [
        ("contextls/addText", {"content": f"archived note {n} needle{n % 7}"}) for n in range(1_500)
    ]
    frames.append(("contextls/search", {"query": "needle3", "mode": "keyword", "limit": 500}))
    frames.append(("contextls/addText", {"content": "the marker"}))
    results = await first.client.burst(frames)
    search_id, marker_id = sorted(first.client.answered)[-2:]
    order = first.client.answered
    assert order.index(marker_id) < order.index(search_id), "the add waited for the search"
    found = results[-2]["hits"]
    assert len(found) == len([n for n in range(1_500) if n % 7 == 3])


async def test_a_large_clear_is_committed_in_steps(editors: list[Session]) -> None:
    """A window of 6 MB is archived in steps, each committed and pushed before the next
    (every client sees it part cleared: one change held them all ~0.3 s for 19 MB), and
    the answer counts the whole window."""
    first, second = editors
    await first.call("contextls/configure", settings={"maxItems": 100, "maxTokens": 5_000_000})
    for n in range(60):
        await first.call("contextls/addText", content=f"large note {n} " + "word " * 20_000)
    pushed = second.client.keep(Notification.DID_CHANGE_STATUS)
    cleared = await first.call("contextls/clear")
    assert cleared["cleared"] == 60 and cleared["status"]["itemCount"] == 0
    await second.wait_for(lambda: any(push["archivedCount"] == 60 for push in pushed))
    part_cleared = {push["archivedCount"] for push in pushed} - {0, 60}
    assert part_cleared, "the window was cleared in one change"
    found = await second.call("contextls/search", query="large note", mode="keyword", limit=100)
    assert len(found["hits"]) == 60


async def test_a_search_embeds_its_query_off_the_event_loop(editors: list[Session]) -> None:
    """A search's query is embedded in a worker thread before the search (the model's
    process may be embedding a batch of the backlog, and every client would wait for it
    on the loop): the add sent after a search for a new question is answered first."""
    first, _ = editors
    await first.call("contextls/search", query="warm the model up")  # loaded once
    results = await first.client.burst(
        [
            ("contextls/search", {"query": "a question never asked before"}),
            ("contextls/addText", {"content": "the marker"}),
        ]
    )
    search_id, marker_id = sorted(first.client.answered)[-2:]
    order = first.client.answered
    assert order.index(marker_id) < order.index(search_id), "the add waited for the search"
    assert results[0]["mode"] == "hybrid" and results[1]["item"]["content"] == "the marker"
