"""Anything the server accepted survives export then import, archive included.

Hypothesis builds windows and archives through the workspace's own requests
(empty files, empty ``__init__.py`` regions, pins, regions made stale by an edit,
every kind, evictions, removals, a clear), exports them with the archive, imports
the document into a fresh workspace of another folder (through JSON, as the CLI
moves it) and checks that contents, kinds, pins and order match.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextls.app import transfer
from contextls.app.session import Session
from contextls.core.errors import ContextError
from contextls.protocol import ExportDocument

from ..unit.test_service import Editor, start

TEXT_KINDS = ("text", "error", "repl-history", "custom", "code")
FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "".join(f"def f{n}():\n    return {n}\n\n" for n in range(12)),
    "notes.md": "# notes\n\nsome words\n",
    "blank.txt": "\n\n\n",
}

step = st.one_of(
    st.tuples(st.just("text"), st.sampled_from(TEXT_KINDS), st.text(min_size=1, max_size=40)),
    st.tuples(st.just("file"), st.sampled_from(sorted(FILES)), st.booleans()),
    st.tuples(st.just("region"), st.integers(0, 30), st.integers(0, 6), st.booleans()),
    st.tuples(st.just("pin"), st.integers(0, 20), st.booleans()),
    st.tuples(st.just("remove"), st.integers(0, 20)),
    st.tuples(st.just("edit"), st.integers(0, 11)),
    st.tuples(st.just("clear"), st.booleans()),
)


def build(root: Path, steps: list[tuple[Any, ...]], max_items: int) -> Session:
    for relative, text in FILES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    session = start(root, ":memory:", Editor(), maxItems=max_items, maxTokens=600)
    workspace = session.route()
    for action, *args in steps:
        ids = [item.id for item in workspace.window]
        with contextlib.suppress(ContextError):  # a refusal changes nothing
            if action == "text":
                workspace.adding.add_text(args[0], args[1])
            elif action == "file":
                workspace.adding.add_file((root / args[0]).as_uri(), pin=args[1])
            elif action == "region":
                start_line = args[0]
                workspace.adding.add_region(
                    (root / "pkg/core.py").as_uri(),
                    (start_line, 0),
                    (start_line + args[1] + 1, 0),
                    pin=args[2],
                )
            elif action == "pin" and ids:
                workspace.changes.pin(ids[args[0] % len(ids)], args[1])
            elif action == "remove" and ids:
                workspace.changes.remove([ids[args[0] % len(ids)]])
            elif action == "edit":  # a region's own text changes: it goes stale
                core = root / "pkg/core.py"
                lines = core.read_text().splitlines(keepends=True)
                lines[3 * args[0]] = f"def g{args[0]}():\n"
                core.write_text("".join(lines))
                workspace.follower.follow_files()
            elif action == "clear":
                workspace.changes.clear(args[0])
    workspace.unit_of_work.commit()
    return session


def shape(document: ExportDocument) -> tuple[list[Any], list[Any]]:
    def of(items: Any) -> list[Any]:
        return [(item.kind, item.content, item.pinned, item.metadata.get("path")) for item in items]

    return of(document.window), of(document.archive)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps=st.lists(step, max_size=25), max_items=st.integers(3, 12))
def test_export_then_import_keeps_everything(steps: list[tuple[Any, ...]], max_items: int) -> None:
    with tempfile.TemporaryDirectory() as here, tempfile.TemporaryDirectory() as there:
        source = build(Path(here), steps, max_items)
        exported = transfer.export(source.route(), archive=True)
        moved = msgspec.json.decode(msgspec.json.encode(exported), type=ExportDocument)

        target = start(Path(there), ":memory:", Editor())
        result = transfer.import_all(target.route(), moved, dry_run=False)
        assert result.evicted == []
        again = transfer.export(target.route(), archive=True)
        window, archive = shape(again)
        # Every item and its text; an item whose file is not in the new folder is stale
        # there (looked at against its file), and a stale item is the newest in the order.
        assert sorted(window, key=repr) == sorted(shape(exported)[0], key=repr)
        assert archive == shape(exported)[1]
        assert again.settings == exported.settings
