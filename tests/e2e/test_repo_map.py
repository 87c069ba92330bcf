"""The repository map over LSP: an item fitted to its share, ranked toward what the
window's code uses, and ranked again when the window changes."""

from __future__ import annotations

from pathlib import Path

from contextls.app.tokenizers import tokenizer

from .conftest import Session
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
