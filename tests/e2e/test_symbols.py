"""Symbols by name over LSP: the server parses the file, finds the definition, and
follows it by its name as the file changes (moved: the item moves with it; its body
edited: stale; gone or renamed: stale, saying so)."""

from __future__ import annotations

from pathlib import Path

from .conftest import Session
from .test_live import wait_for_item

APP = '''import os


class Parser:
    """Reads things."""

    def parse(self, text):
        return text.split()

    def close(self):
        pass


def main():
    return Parser().parse("a b")
'''


async def test_a_symbol_is_added_by_its_qualified_name(session: Session, workspace: Path) -> None:
    (workspace / "app.py").write_text(APP)
    added = await session.call(
        "contextls/addSymbolByName", uri=session.uri("app.py"), name="Parser.parse"
    )
    item = added["item"]
    assert item["content"] == "    def parse(self, text):\n        return text.split()\n"
    meta = item["metadata"]
    assert (meta["startLine"], meta["endLine"]) == (7, 8)
    assert meta["symbol"] == meta["qualifiedName"] == "Parser.parse"
    assert meta["symbolKind"] == "method"


async def test_a_bare_name_is_searched_in_the_workspace(session: Session, workspace: Path) -> None:
    (workspace / "app.py").write_text(APP)
    (workspace / "other.py").write_text("def close():\n    return 1\n")
    found = await session.call("contextls/addSymbolByName", name="main")
    assert found["item"]["metadata"]["path"] == "app.py"
    error = await session.error("contextls/addSymbolByName", name="close")
    assert error.data is not None
    names = sorted((c["path"], c["name"]) for c in error.data["candidates"])
    assert names == [("app.py", "Parser.close"), ("other.py", "close")]
    assert "app.py::Parser.close (10-11)" in error.message and "other.py::close" in error.message
    missing = await session.error("contextls/addSymbolByName", name="Parser.prase")
    assert "Parser.parse" in missing.message


async def test_a_symbol_follows_its_definition(session: Session, workspace: Path) -> None:
    path = workspace / "app.py"
    path.write_text(APP)
    added = await session.call(
        "contextls/addSymbolByName", uri=session.uri("app.py"), name="Parser.parse"
    )
    item_id = added["item"]["id"]

    # Moved: three lines come above it, and the class is reordered below.
    moved = APP.replace("import os\n", "import os\nimport re\nimport sys\nimport json\n")
    moved = moved.replace(
        "    def parse(self, text):\n        return text.split()\n\n    def close(self):\n"
        "        pass\n",
        "    def close(self):\n        pass\n\n    def parse(self, text):\n"
        "        return text.split()\n",
    )
    path.write_text(moved)
    item = await wait_for_item(session, item_id, lambda i: i["metadata"]["startLine"] == 13)
    assert not item["stale"] and item["metadata"]["endLine"] == 14
    assert item["content"] == "    def parse(self, text):\n        return text.split()\n"

    # Its body edited: stale, at its place.
    path.write_text(moved.replace("return text.split()", "return text.split(',')"))
    item = await wait_for_item(session, item_id, lambda i: i["stale"])
    assert item["metadata"]["staleReason"] == "changed"
    refreshed = await session.call("contextls/refresh", ids=[item_id])
    assert "split(',')" in refreshed["refreshed"][0]["content"]

    # Renamed: the name is gone, and the item says so.
    path.write_text(moved.replace("def parse(", "def parse_all("))
    item = await wait_for_item(session, item_id, lambda i: i["stale"])
    assert item["metadata"]["staleReason"] == "missing"


async def test_the_symbol_at_a_place(session: Session, workspace: Path) -> None:
    (workspace / "app.py").write_text(APP)
    found = await session.call(
        "contextls/symbolAt", uri=session.uri("app.py"), position={"line": 7, "character": 4}
    )
    assert found["symbol"]["name"] == "Parser.parse" and found["language"] == "python"
    (workspace / "notes.txt").write_text("hello\n")
    none = await session.call(
        "contextls/symbolAt", uri=session.uri("notes.txt"), position={"line": 0, "character": 0}
    )
    assert none["symbol"] is None and "not of .txt files" in none["reason"]


async def test_a_symbol_an_editor_found_follows_its_definition_too(
    session: Session, workspace: Path
) -> None:
    path = workspace / "app.py"
    path.write_text(APP)
    added = await session.call(
        "contextls/addSymbol",
        uri=session.uri("app.py"),
        name="parse",  # as VS Code's provider names a method
        symbolKind=6,
        range={"start": {"line": 6, "character": 0}, "end": {"line": 8, "character": 0}},
    )
    item = added["item"]
    assert item["metadata"]["qualifiedName"] == "Parser.parse"
    path.write_text("# a new first line\n" + APP)
    moved = await wait_for_item(session, item["id"], lambda i: i["metadata"]["startLine"] == 8)
    assert not moved["stale"]


async def test_an_editor_symbol_holds_the_definition_the_server_follows(
    session: Session, workspace: Path
) -> None:
    """An editor's range that covers only a definition's first line: the item follows the
    name, so it holds the whole definition, and a look at the unchanged file changes
    nothing (with the editor's span it went stale at once, file untouched)."""
    (workspace / "app.py").write_text(APP)
    added = await session.call(
        "contextls/addSymbol",
        uri=session.uri("app.py"),
        name="parse",
        symbolKind=6,
        range={"start": {"line": 6, "character": 0}, "end": {"line": 7, "character": 0}},
    )
    item = added["item"]
    assert item["metadata"]["qualifiedName"] == "Parser.parse"
    assert (item["metadata"]["startLine"], item["metadata"]["endLine"]) == (7, 8)
    assert item["content"] == "".join(APP.splitlines(keepends=True)[6:8])
    revision = (await session.call("contextls/status"))["revision"]
    refreshed = await session.call("contextls/refresh")  # looks at every file first
    assert refreshed["refreshed"] == []
    after = await session.call("contextls/status")
    assert after["revision"] == revision and after["staleCount"] == 0


async def test_a_symbol_of_a_file_already_whole_refreshes_the_file(
    session: Session, workspace: Path
) -> None:
    (workspace / "app.py").write_text(APP)
    whole = await session.call("contextls/addFile", uri=session.uri("app.py"))
    again = await session.call(
        "contextls/addSymbolByName", uri=session.uri("app.py"), name="Parser.parse"
    )
    item = again["item"]
    assert item["id"] == whole["item"]["id"] and again["deduplicated"]
    assert item["view"] == "whole" and item["content"] == APP
    assert "qualifiedName" not in item["metadata"]


async def test_a_definition_of_a_file_shown_as_its_outline_is_its_own_item(
    session: Session, workspace: Path
) -> None:
    """A view is how an item is shown: the outline hides bodies, so a definition added by
    name sits beside it, whole, and an outline added after a definition leaves it be."""
    (workspace / "app.py").write_text(APP)
    outlined = await session.call("contextls/addFile", uri=session.uri("app.py"), outline=True)
    method = await session.call(
        "contextls/addSymbolByName", uri=session.uri("app.py"), name="Parser.parse"
    )
    assert method["item"]["id"] != outlined["item"]["id"] and not method["deduplicated"]
    assert method["item"]["content"] == "    def parse(self, text):\n        return text.split()\n"
    listed = {i["id"]: i for i in (await session.call("contextls/list"))["items"]}
    assert listed[outlined["item"]["id"]]["view"] == "outline"
    again = await session.call("contextls/addFile", uri=session.uri("app.py"), outline=True)
    assert again["item"]["id"] == outlined["item"]["id"]  # the outline refreshed, nothing merged
    rendered = (await session.call("contextls/render"))["text"]
    assert "return text.split()" in rendered  # the definition's body is still shown


