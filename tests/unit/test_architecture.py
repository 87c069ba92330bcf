"""The server's structure, checked: imports go one way with no circle (``TYPE_CHECKING``
imports included), modules stay small, and comments say why, never when. The clients
import only the wire contract and what server and clients share."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "server" / "contextls"
LAYERS = {
    "common": 0,
    "protocol": 0,
    "structure": 1,
    "core": 2,
    "storage": 3,
    "search": 4,
    "semantic": 5,
    "app": 6,
    "lsp": 7,
    "daemon": 8,
}
"""Each package may import only packages of a lower layer (and itself). Search by
meaning sits between search and app: app never imports it; lsp wires it in. What
the code says about itself (structure) knows nothing of windows, so the window can
show a file as its outline."""
MAX_LINES = 400
COHESIVE = {
    "contextls.core.window": "one data structure whose every method keeps the same invariants",
}
"""Modules allowed past ``MAX_LINES`` (by at most a third), and why a split would hurt."""
HISTORY = re.compile(r"\b(?:issue|session)\s+#?\d+\b|\bas before\b|\bused to (?:be|do)\b", re.I)


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """Every contextls module ``name`` imports, wherever the import is written."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # ``from package import module`` imports the module; else the names' module.
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            if target in known and target != name:
                yield target


def layer(name: str) -> int:
    parts = name.split(".")
    if len(parts) == 1:
        return -1  # the package itself: its version only
    if parts[1] == "__main__":
        return max(LAYERS.values())
    return LAYERS[parts[1]]


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: set(imports(name, path, known)) for name, path in known.items()}


def test_every_package_has_a_layer() -> None:
    packages = {name.split(".")[1] for name in modules() if name.count(".") >= 1}
    assert packages - {"__main__"} <= set(LAYERS), packages - set(LAYERS)


def test_imports_go_down_the_layers_only() -> None:
    upward = [
        f"{name} -> {target}"
        for name, targets in graph().items()
        for target in sorted(targets)
        if layer(target) > layer(name) and layer(name) >= 0
    ]
    assert not upward, upward


def test_imports_name_their_module_in_full() -> None:
    # A reader (and a grep) finds who imports a module by its full name.
    relative = [
        f"{name}:{node.lineno}"
        for name, path in modules().items()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.level
    ]
    assert relative == []


def test_no_import_circles() -> None:
    edges = graph()
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for target in sorted(edges[name]):
            if state.get(target) == 1:
                circles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[name] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name)
    assert not circles, circles


def test_below_the_edge_nothing_imports_the_protocol_libraries() -> None:
    """pygls and lsprotocol belong to ``lsp`` (and the daemon that runs it)."""
    offenders = []
    for name, path in modules().items():
        if layer(name) >= LAYERS["lsp"]:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [
                f"{name}: {n}" for n in names if n.split(".")[0] in ("pygls", "lsprotocol")
            ]
    assert not offenders, offenders


CLIENTS = REPO / "clients" / "python"
CLIENT_MAY_IMPORT = ("contextls.protocol", "contextls.common", "contextls_client")
"""What a client may import of ours: the wire contract, the shared helpers, itself (and
the bare package ``contextls``, its version)."""


def client_imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every module a client module names in an import, ``importlib.import_module`` or
    ``__import__`` included; an import by a name the code computes is reported as such."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, node.module or ""
        elif isinstance(node, ast.Call) and node.args:
            function = node.func
            called = (
                function.attr
                if isinstance(function, ast.Attribute)
                else function.id
                if isinstance(function, ast.Name)
                else ""
            )
            if called not in ("import_module", "__import__"):
                continue
            named = node.args[0]
            if isinstance(named, ast.Constant) and isinstance(named.value, str):
                yield node.lineno, named.value
            elif (
                isinstance(named, ast.JoinedStr)
                and named.values
                and isinstance(value := named.values[0], ast.FormattedValue)
                and isinstance(value.value, ast.Name)
                and value.value.id == "__name__"
            ):
                continue  # a module of the importing package's own
            else:
                yield node.lineno, "<a name computed at run time>"


def test_clients_import_only_the_wire_contract_and_the_shared_package() -> None:
    offenders = [
        f"{path.relative_to(REPO)}:{line}: {name}"
        for path in sorted(CLIENTS.rglob("*.py"))
        for line, name in client_imports(path)
        if name.startswith(("contextls.", "<"))
        and not any(
            name == allowed or name.startswith(f"{allowed}.") for allowed in CLIENT_MAY_IMPORT
        )
    ]
    assert not offenders, offenders


def test_the_client_import_check_sees_every_kind_of_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import importlib\n"
        "from contextls.core.secrets import is_secret_path\n"
        "import contextls.app.service\n"
        "importlib.import_module('contextls.daemon.cli')\n"
        "__import__('contextls.lsp')\n"
        "importlib.import_module(f'{__name__}.window')\n"
        "importlib.import_module(name)\n"
    )
    assert [name for _, name in client_imports(sample)] == [
        "importlib",
        "contextls.core.secrets",
        "contextls.app.service",
        "contextls.daemon.cli",
        "contextls.lsp",
        "<a name computed at run time>",
    ]


@pytest.mark.parametrize("name", sorted(modules()))
def test_modules_stay_small(name: str) -> None:
    lines = len(modules()[name].read_text().splitlines())
    limit = MAX_LINES * 4 // 3 if name in COHESIVE else MAX_LINES
    assert lines <= limit, f"{name} has {lines} lines; give each job its own module"


def test_comments_say_why_never_when() -> None:
    places = [
        *PACKAGE.rglob("*.py"),
        *PACKAGE.rglob("*.md"),
        *(REPO / "clients" / "python").rglob("*.py"),
        *(REPO / "editors" / "emacs").glob("*.el"),
        *(REPO / "editors" / "vscode" / "src").rglob("*.ts"),
        REPO / "README.md",
    ]
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in places
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if HISTORY.search(line)
    ]
    assert not found, found
