"""The stateful middle in process: service, workspace, write burst, settings and store.

Real SQLite (a file in tmp_path, or ``:memory:``) and real tokenizers; the
editor is a fake listener that records what it is told, and timers are
recorded rather than run. Storage faults that cannot be made on demand
(a commit that fails) are injected by replacing one store method.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from contextls.app.service import ContextService
from contextls.app.session import Session
from contextls.app.workspace import Workspace
from contextls.core.errors import ContextError
from contextls.protocol import ContextItem, DidWarnParams, ErrorCode, EvictionReason, Status
from contextls.storage.store import Store


class Editor:
    """What the server would tell the editor: statuses, evictions, warnings."""

    def __init__(self) -> None:
        self.statuses: list[Status] = []
        self.evictions: list[tuple[str, list[str], EvictionReason]] = []
        self.warnings: list[str] = []
        self.warned: list[DidWarnParams] = []
        """The warnings as data, each as the server sends it to a client that takes data."""
        self.timers: list[tuple[float, Callable[[], None]]] = []

    def status_changed(self, status: Status) -> None:
        self.statuses.append(status)

    def evicted(self, workspace: str, items: list[ContextItem], reason: EvictionReason) -> None:
        self.evictions.append((workspace, [item.id for item in items], reason))

    def warn(self, message: str | DidWarnParams) -> None:
        warning = message if isinstance(message, DidWarnParams) else DidWarnParams(message=message)
        self.warnings.append(warning.message)
        self.warned.append(warning)

    def later(self, delay: float, callback: Callable[[], None]) -> None:
        self.timers.append((delay, callback))


def start(root: Path, storage: str, editor: Editor, **settings: Any) -> Session:
    """A service with one client session on ``root`` (as ``contextls serve --stdio`` has)."""
    service = ContextService(editor, lambda uri: None, editor.warn, editor.later)
    session = Session(service, editor.warn)
    session.set_folders([root.as_uri()])
    session.configure({"storage": storage, **settings}, initial=True)
    return session


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "a.py").write_text("one\ntwo\nthree\nfour\n")
    return folder


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "context.sqlite3")


def ids(session: Session) -> list[str]:
    return [item.id for item in session.route().window]


# ------------------------------------------------------------- routing


def test_reads_take_no_write_lock(root: Path, db: str) -> None:
    editor = Editor()
    service_session = start(root, db, editor)
    service = service_session.service
    workspace = service_session.route()
    workspace.status()
    workspace.reader.list_items(None, None)
    workspace.reader.render("markdown", None, None, None, None)
    service.count_tokens("hello", None)
    assert not service.store.in_transaction
    assert not service.unit_of_work.open


def test_a_change_opens_the_burst_and_commit_announces_it(root: Path, db: str) -> None:
    editor = Editor()
    service_session = start(root, db, editor, maxItems=2)
    service = service_session.service
    workspace = service_session.route()  # writes maxItems=2 to the new window: one change
    assert service.commit() is None
    editor.statuses.clear()
    for n in range(3):
        workspace.adding.add_text("text", f"note {n}")
    work = service.unit_of_work
    assert work.open and work.uncommitted and workspace.revision == 4
    assert editor.statuses == []  # nothing is told before the commit
    assert service.commit() is None
    assert not service.store.in_transaction
    assert [s.revision for s in editor.statuses] == [4]
    assert editor.evictions == [(root.as_uri(), ["ctx-1"], "maxItems")]
    # ...and it is in the file, for any other connection.
    other = sqlite3.connect(db)
    assert other.execute("SELECT count(*) FROM items").fetchone()[0] == 2
    assert other.execute("SELECT count(*) FROM archive").fetchone()[0] == 1


def test_restored_within_the_burst_is_not_announced_as_evicted(root: Path, db: str) -> None:
    editor = Editor()
    service_session = start(root, db, editor, maxItems=1)
    service = service_session.service
    workspace = service_session.route()
    workspace.adding.add_text("text", "first")
    workspace.adding.add_text("text", "second")
    workspace.changes.restore(["ctx-1"], pin=False)
    service.commit()
    assert editor.evictions == [(root.as_uri(), ["ctx-2"], "maxItems")]


# ------------------------------------------------------- failed changes


def test_a_change_that_fails_half_way_is_undone_from_the_store(root: Path, db: str) -> None:
    editor = Editor()
    service_session = start(root, db, editor, maxTokens=100)
    workspace = service_session.route()
    workspace.adding.add_text("text", "kept " * 10, pin=True)
    workspace.adding.add_text("text", "also kept")
    before = [(item.id, item.tokens, item.encoding) for item in workspace.window]
    # cl100k_base counts the pinned text the same, so retokenizing succeeds and
    # changes the window; then the new limits refuse: nothing may remain of it.
    with pytest.raises(ContextError) as refused:
        workspace.config.configure({"maxTokens": 5, "encoding": "cl100k_base"})
    assert refused.value.code == ErrorCode.NO_ROOM
    assert [(item.id, item.tokens, item.encoding) for item in workspace.window] == before
    assert workspace.settings.encoding == "o200k_base"
    assert workspace.window.encoding == "o200k_base"


def test_a_write_that_fails_leaves_the_window_as_the_store_has_it(
    root: Path, db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = Editor()
    service_session = start(root, db, editor)
    service = service_session.service
    workspace = service_session.route()
    workspace.adding.add_text("text", "earlier in the burst")

    def full(*_: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(service.store.windows, "save_items", full)
    with pytest.raises(ContextError) as refused:
        workspace.adding.add_text("text", "this one cannot be saved")
    assert refused.value.code == ErrorCode.STORAGE
    assert "nothing changed" in refused.value.message
    monkeypatch.undo()
    assert [item.content for item in workspace.window] == ["earlier in the burst"]
    assert service.commit() is None
    assert [item.content for item in Store(db).windows.load_window(root.as_uri())] == [
        "earlier in the burst"
    ]


def test_a_failed_commit_reloads_and_reports_the_storage_error(
    root: Path, db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = Editor()
    service_session = start(root, db, editor)
    service = service_session.service
    workspace = service_session.route()
    workspace.adding.add_text("text", "saved")
    service.commit()
    workspace.adding.add_text("text", "lost with the commit")
    store = service.store
    real_commit = store.commit

    def failing_commit() -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store, "commit", failing_commit)
    failure = service.commit()
    assert failure is not None and "disk is full" in failure and "nothing changed" in failure
    assert [item.content for item in workspace.window] == ["saved"]
    assert editor.statuses[-1].item_count == 1
    assert any("could not be saved" in warning for warning in editor.warnings)
    # The server goes on: reads work, and the next change commits.
    monkeypatch.setattr(store, "commit", real_commit)
    workspace.adding.add_text("text", "after the failure")
    assert service.commit() is None
    assert [item.content for item in Store(db).windows.load_window(root.as_uri())] == [
        "saved",
        "after the failure",
    ]


def test_a_real_full_database_refuses_the_change_and_keeps_serving(root: Path, db: str) -> None:
    editor = Editor()
    service_session = start(root, db, editor, maxItems=1000, maxTokens=10_000_000)
    service = service_session.service
    workspace = service_session.route()
    workspace.adding.add_text("text", "small")
    service.commit()
    pages = service.store._db.execute("PRAGMA page_count").fetchone()[0]
    service.store._db.execute(f"PRAGMA max_page_count = {pages + 2}")
    refused = None
    for n in range(200):
        try:
            workspace.adding.add_text("text", f"{n} " + "filler " * 400)
        except ContextError as error:
            refused = error
            break
    assert refused is not None and refused.code == ErrorCode.STORAGE
    kept = [item.content for item in workspace.window]
    service.commit()
    assert [item.content for item in Store(db).windows.load_window(root.as_uri())] == kept
    assert workspace.reader.list_items(None, None).items[0].content == "small"


# ------------------------------------------------------------ settings


def test_invalid_settings_fall_back_one_by_one_with_a_warning(root: Path, db: str) -> None:
    editor = Editor()
    service_session = start(root, db, editor, maxItems=0, maxTokens=500, encoding="klingon")
    assert service_session.settings.max_items == 50
    assert service_session.settings.max_tokens == 500
    assert service_session.settings.encoding == "o200k_base"
    assert len(editor.warnings) == 2
    assert any("maxItems" in warning for warning in editor.warnings)


def test_a_limit_below_the_pinned_items_is_refused_and_the_old_one_kept(
    root: Path, db: str
) -> None:
    editor = Editor()
    service_session = start(root, db, editor)
    workspace = service_session.route()
    workspace.adding.add_text("text", "pinned " * 50, pin=True)
    service_session.configure({"maxTokens": 10})
    assert workspace.settings.max_tokens == 8000
    assert workspace.window.limits.max_tokens == 8000
    assert "unpin" in editor.warnings[-1]


# ----------------------------------------------------- other processes


def test_another_process_commit_is_seen_on_the_next_read(root: Path, db: str) -> None:
    mine, theirs = Editor(), Editor()
    service_session = start(root, db, mine)
    service = service_session.service
    other_session = start(root, db, theirs)
    other = other_session.service
    assert service_session.route().status().item_count == 0
    other_session.route().adding.add_text("text", "from the other editor")
    other.commit()
    assert [item.content for item in service_session.route().window] == ["from the other editor"]
    assert mine.statuses and mine.statuses[-1].item_count == 1
    # ...and a change of ours continues from their ids, not over them.
    service_session.route().adding.add_text("text", "from this one")
    service.commit()
    assert ids(service_session) == ["ctx-1", "ctx-2"]


def test_reads_do_not_reload_when_nothing_changed_elsewhere(root: Path, db: str) -> None:
    editor = Editor()
    service_session = start(root, db, editor)
    service = service_session.service
    workspace = service_session.route()
    workspace.adding.add_text("text", "x")
    service.commit()
    window = workspace.window
    item = next(iter(window))
    service_session.route()
    assert next(iter(workspace.window)) is item  # the same object: no reload


# ------------------------------------------------------ the database file


def test_garbage_over_the_file_is_noticed_and_the_window_rescued(root: Path, db: str) -> None:
    editor = Editor()
    service_session = start(root, db, editor)
    service = service_session.service
    workspace = service_session.route()
    for n in range(5):
        workspace.adding.add_text("text", f"acknowledged {n}")
    service.commit()
    service.store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    service.store.checkpointed()
    with open(db, "r+b") as file:
        file.write(b"\xde\xad\xbe\xef" * 4096)
    workspace = service_session.route()  # the next request notices
    assert any("overwritten" in warning for warning in editor.warnings)
    assert [item.content for item in workspace.window] == [f"acknowledged {n}" for n in range(5)]
    assert list(Path(db).parent.glob("*.damaged-*"))
    workspace.adding.add_text("text", "after the rescue")
    service.commit()
    service.close()
    contents = [item.content for item in Store(db).windows.load_window(root.as_uri())]
    assert contents == [f"acknowledged {n}" for n in range(5)] + ["after the rescue"]


def test_memory_storage_works_for_a_session(root: Path) -> None:
    editor = Editor()
    service_session = start(root, ":memory:", editor)
    service = service_session.service
    service_session.route().adding.add_text("text", "in memory")
    assert service.commit() is None
    assert [item.content for item in service_session.route().window] == ["in memory"]


def test_restoring_more_than_fits_keeps_one_archive_row_per_id(root: Path, db: str) -> None:
    editor = Editor()
    service_session = start(root, db, editor, maxItems=1)
    service = service_session.service
    workspace = service_session.route()
    for n in range(3):
        workspace.adding.add_text("text", f"note {n}")
    workspace.changes.restore(["ctx-1", "ctx-2"], pin=False)  # ctx-2 pushes ctx-1 out again
    service.commit()
    raw = sqlite3.connect(db)
    rows = raw.execute("SELECT id, count(*) FROM archive GROUP BY id ORDER BY id").fetchall()
    assert rows == [("ctx-1", 1), ("ctx-3", 1)]
    assert workspace.archived_count == 2 == workspace.status().archived_count
    assert ids(service_session) == ["ctx-2"]


def test_the_first_add_of_a_fresh_server_loads_its_tokenizer_before_the_write_lock(
    root: Path, db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Servers of their own share the database: one that loaded its tokenizer inside the
    write transaction held the lock ~0.3 s, and 20 started at once timed each other out
    ("database is locked"). The one-time work comes before the lock."""
    from contextls.app import tokenizers as bpe

    monkeypatch.setattr(bpe, "_LOADED", {})  # as in a fresh process
    events: list[str] = []
    real_begin, real_commit, real_build = Store.begin, Store.commit, bpe._build

    def begin(store: Store, wait: bool = True) -> bool:
        opened = real_begin(store, wait)
        if opened:
            events.append("lock")
        return opened

    def commit(store: Store) -> None:
        real_commit(store)
        events.append("unlock")

    def build(name: str) -> object:
        events.append("load tokenizer")
        return real_build(name)

    monkeypatch.setattr(Store, "begin", begin)
    monkeypatch.setattr(Store, "commit", commit)
    monkeypatch.setattr(bpe, "_build", build)
    session = start(root, db, Editor())
    workspace = session.route()
    workspace.adding.add_text("text", "the first note of a fresh server " * 20)
    workspace.unit_of_work.commit()
    assert "load tokenizer" in events and "lock" in events, events
    held = events[events.index("lock") :]
    assert "load tokenizer" not in held, events  # never loaded while holding the lock


def test_a_large_text_counted_first_is_added_without_scanning_it_again(root: Path, db: str) -> None:
    """The add of a large text counts, scans for secrets and weighs it in a worker thread
    (``precount``); the add on the event loop, which every other client waits for, then
    finds all of it done: no scan runs there (CPython: ~30 ms for 600 KB)."""
    from contextls.core import adaptive, secrets
    from contextls.core.candidates import text

    session = start(root, db, Editor(), maxTokens=2_000_000)
    workspace = session.route()
    content = "password = 'hunter2hunter2'\n" + "def f(x):\n    return x  # why?\n" * 3_000
    assert len(content) >= secrets.REMEMBERED_FROM
    candidate = text("text", content)
    workspace.adding.precount(candidate)
    scans = secrets._scanned.cache_info().misses
    weighs = adaptive._remembered_signs.cache_info().misses
    result = workspace.adding.add_candidate(candidate)
    workspace.status()
    assert secrets._scanned.cache_info().misses == scans
    assert adaptive._remembered_signs.cache_info().misses == weighs
    assert result.warnings and "password" in result.warnings[0]


def test_a_change_of_model_loads_its_tokenizer_before_the_answer_even_for_an_empty_window(
    root: Path, db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``configure`` counts the window in the new model's tokens in a thread before it
    answers (``precount``); with nothing to count, the tokenizer was left for the next
    change to load on the event loop, every other client waiting."""
    from contextls.app import tokenizers as bpe
    from contextls.app.configuring import precount

    monkeypatch.setattr(bpe, "_LOADED", {})  # as in a fresh process
    session = start(root, db, Editor())
    workspace = session.route()
    tokenizer = workspace.config.tokenizer_after({"model": "claude-opus-4.7"}, [])
    assert tokenizer is not None and not tokenizer.loaded and not list(workspace.window)
    assert precount(tokenizer, []) == {}
    assert tokenizer.loaded


async def test_a_folder_opened_has_its_tokenizer_loaded_and_in_git_its_map_prepared(
    tmp_path: Path, db: str
) -> None:
    from contextls.app.repo_map import PREPARE_AFTER

    plain, repository = tmp_path / "plain", tmp_path / "repository"
    for folder in (plain, repository):
        folder.mkdir()
        (folder / "a.py").write_text("def ready():\n    return 1\n")
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    editor = Editor()
    session = start(plain, db, editor)
    service = session.service
    session.set_folders([repository.as_uri()])
    session.set_folders([repository.as_uri()])  # opened again (another client): once
    later = [callback for delay, callback in editor.timers if delay == PREPARE_AFTER]
    assert len(later) == 2 and service.maps.pid is None  # nothing before its time
    assert not service.tokenizer("o200k_base").loaded
    try:
        for ready in later:
            ready()
        first = session.route(uri=(plain / "a.py").as_uri())
        workspace = session.route(uri=(repository / "a.py").as_uri())
        assert first.map._preparing is None  # not a repository: no map ahead
        preparing = workspace.map._preparing
        assert preparing is not None
        prepared = await preparing
        assert (prepared.files, prepared.unmapped, prepared.already) == (1, 0, False)
        for opened in (first, workspace):  # loaded in a thread, or already by a change
            await asyncio.wait_for(_loading(opened), 60)
            assert opened.tokenizer.loaded
    finally:
        service.maps.close()


async def _loading(workspace: Workspace) -> None:
    while not workspace.tokenizer.loaded:
        await asyncio.sleep(0.01)


def test_a_home_folder_under_git_is_not_prepared(
    tmp_path: Path, db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextls.app.repo_map import PREPARE_AFTER

    home = tmp_path / "home"
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(home)], check=True)  # dotfiles kept in git
    monkeypatch.setenv("HOME", str(home))
    editor = Editor()
    session = start(tmp_path, db, editor)
    assert len([delay for delay, _ in editor.timers if delay == PREPARE_AFTER]) == 1
    session.set_folders([home.as_uri()])  # refused: too wide to be a workspace folder
    assert len([delay for delay, _ in editor.timers if delay == PREPARE_AFTER]) == 1


def test_a_clear_keeps_one_copy_of_each_text_in_the_archive(tmp_path: Path) -> None:
    """The copies already archived are looked up for every cleared item at once: each
    text from a source stays once, under the id it left with last, its old id an alias."""
    root = tmp_path / "ws"
    root.mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (root / name).write_text(f"def {name[0]}():\n    return '{name}'\n")
    session = start(root, str(tmp_path / "db.sqlite3"), Editor(), maxItems=10)
    workspace = session.route()
    first = [workspace.adding.add_file((root / name).as_uri()).item.id for name in ("a.py", "b.py")]
    workspace.changes.remove(first)
    again = [
        workspace.adding.add_file((root / name).as_uri()).item.id
        for name in ("a.py", "b.py", "c.py")
    ]
    workspace.adding.add_text("text", "a note")
    workspace.changes.clear(keep_pinned=False)
    session.service.commit()
    archived = {
        item.id: item.path
        for item, _, _ in workspace.store.archive.archive_rows(workspace.root_uri)
    }
    assert sorted(archived.values(), key=str) == [None, "a.py", "b.py", "c.py"]
    assert set(again) <= set(archived) and not set(first) & set(archived)
    assert workspace.archived_count == 4
    assert workspace.store.archive.alias_targets(workspace.root_uri, first) == dict(
        zip(first, again[:2], strict=True)
    )


def test_a_refresh_of_files_that_did_not_change_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read again and the same, an item's row is not written again (a refresh of 274
    files rewrote all their text, ~50 ms); one that changed is saved, as before."""
    root = tmp_path / "ws"
    root.mkdir()
    for name in ("a.py", "b.py"):
        (root / name).write_text(f"def {name[0]}():\n    return 1\n")
    session = start(root, str(tmp_path / "db.sqlite3"), Editor(), maxItems=10)
    workspace = session.route()
    ids = [workspace.adding.add_file((root / n).as_uri()).item.id for n in ("a.py", "b.py")]
    session.service.commit()
    revision = workspace.status().revision
    saved: list[str] = []
    save_items = workspace.store.windows.save_items

    def saving(root_uri: str, items: Any) -> None:
        items = list(items)
        saved.extend(item.id for item in items)
        save_items(root_uri, items)

    monkeypatch.setattr(workspace.store.windows, "save_items", saving)
    same = workspace.follower.refresh(ids)
    session.service.commit()
    assert [item.id for item in same.refreshed] == ids
    assert same.status.revision == revision and saved == []
    (root / "b.py").write_text("def b():\n    return 2\n")
    changed = workspace.follower.refresh(ids)
    session.service.commit()
    assert [item.id for item in changed.refreshed] == ids
    assert changed.status.revision == revision + 1 and saved == [ids[1]]
    reloaded = Store(str(tmp_path / "db.sqlite3"))
    rows = {item.id: item.content for item in reloaded.windows.load_window(workspace.root_uri)}
    assert rows[ids[1]] == "def b():\n    return 2\n"
