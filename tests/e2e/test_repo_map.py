"""The repository map over LSP: an item fitted to its share, ranked toward what the
window's code uses, and ranked again when the window changes."""

from __future__ import annotations

from pathlib import Path

from contextls.app.tokenizers import tokenizer

from .conftest import Session, Starter
from .test_live import wait_for_item


def write_graph(root: Path) -> None:
    (root / "app.py").write_text(
        "from store import Store\n\n\ndef main():\n    return Store().get(1)\n"
    )
    (root / "store.py").write_text("class Store:\n    def get(self, key):\n        return key\n")
    (root / "report.py").write_text(
        "from layout import page\n\n\ndef report():\n    return page()\n"
    )
    (root / "layout.py").write_text("def page():\n    return 'p'\n")
    (root / "utils.py").write_text("def helper(x):\n    return x\n")
    for n in range(12):
        (root / f"noise{n}.py").write_text(
            f"from utils import helper\n\n\ndef n{n}():\n    return helper({n})\n"
        )


async def test_the_map_is_fitted_ranked_and_live(session: Session, workspace: Path) -> None:
    import shutil

    for old in workspace.iterdir():
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    write_graph(workspace)
    await session.call("contextls/addFile", uri=session.uri("app.py"))
    added = await session.call("contextls/addMap", tokens=64)
    item = added["item"]
    assert item["view"] == "map" and item["kind"] == "custom"
    assert item["tokens"] <= 64 == item["metadata"]["mapTokens"]
    assert tokenizer("o200k_base").count(item["content"]) < item["tokens"]  # with its heading
    assert item["content"].startswith("store.py:\n│class Store:\n│    def get(self, key):")
    assert "return key" not in item["content"]
    status = added["status"]
    assert status["mapCount"] == 1

    # The window changes: the map follows what the window's code uses now.
    await session.call("contextls/addFile", uri=session.uri("report.py"))
    await session.call(
        "contextls/remove",
        ids=[
            i["id"]
            for i in (await session.call("contextls/list"))["items"]
            if i["metadata"].get("path") == "app.py"
        ],
    )
    ranked = await wait_for_item(
        session, item["id"], lambda i: i["content"].startswith("layout.py:")
    )
    assert ranked["tokens"] <= 64 and "rankMs" in ranked["metadata"]


async def test_a_workspace_past_the_code_a_map_holds_is_mapped_by_its_newest_files(
    start: Starter, workspace: Path
) -> None:
    """``$CONTEXTLS_MAP_MB`` bounds the code the server's map process holds: past it the
    files changed longest ago are left out, and the map says how many, in its text and
    as data."""
    import os

    for n in range(6):
        path = workspace / f"m{n}.py"
        path.write_text(f"def in_m{n}():\n    return {n}\n" + "# padding\n" * 100)
        os.utime(path, ns=(1_000_000_000 * (n + 1), 1_000_000_000 * (n + 1)))
    app = workspace / "src" / "app.py"
    os.utime(app, ns=(0, 0))  # the fixture's file: changed longest ago
    session = await start(env={**os.environ, "CONTEXTLS_MAP_MB": str(3_500 / 2**20)})
    added = await session.call("contextls/addMap")
    item = added["item"]
    assert item["metadata"]["unmappedFiles"] == 4
    assert {n for n in range(6) if f"def in_m{n}" in item["content"]} == {3, 4, 5}
    assert (
        item["content"]
        .rstrip("\n")
        .endswith(
            "⋮ 4 of the workspace's 7 files are not mapped: a map holds the 0.00333786 MB of code"
            " changed most recently"
        )
    )


async def test_a_repository_is_parsed_for_its_map_before_one_is_asked(
    start: Starter, workspace: Path, tmp_path: Path
) -> None:
    """A moment after a workspace of a git repository opens, the maps' process parses it
    (the facts cache fills with no map asked); the map asked then is the same map."""
    import os
    import sqlite3
    import subprocess

    write_graph(workspace)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    cache = tmp_path / "facts.sqlite3"
    session = await start(env={**os.environ, "CONTEXTLS_FACTS_CACHE": str(cache)})
    await session.call("contextls/status")

    def parsed() -> int:
        if not cache.exists():
            return 0
        with sqlite3.connect(cache) as db:
            try:
                return int(db.execute("SELECT count(*) FROM facts").fetchone()[0])
            except sqlite3.OperationalError:  # the table is not made yet
                return 0

    await session.wait_for(lambda: parsed() == len(list(workspace.rglob("*.py"))))
    added = await session.call("contextls/addMap", tokens=64)
    assert added["item"]["content"].startswith("utils.py:\n│def helper(x):")
