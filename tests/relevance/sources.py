"""Functions of code nobody here wrote, each with its own description taken out.

Two sources, read where they are installed (nothing is copied into this repository):

- modules of Python's standard library, read as files (``sysconfig``'s stdlib
  path), never imported; every function and method, its docstring removed;
- the npm package ``lodash`` (JavaScript, one function a file, JSDoc comments),
  unpacked from the registry's tarball with ``npm pack`` into a cache folder.

A function's description (its docstring's first paragraph, or the text of its
JSDoc block before the first tag) becomes a query and the function without it the
document: the CodeSearchNet method.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sysconfig
import tarfile
from dataclasses import dataclass
from pathlib import Path

MAX_CHARS = 4000
"""Characters of a function kept as its document (a long one is cut like a region)."""
LODASH = "lodash@4.17.21"


@dataclass(frozen=True)
class Function:
    key: str  # "shutil.copyfileobj", "lodash/chunk"
    path: str  # "shutil.py", "lodash/chunk.js"
    symbol: str
    language: str
    code: str  # the source without its docstring or leading JSDoc block
    doc: str  # the description ("" when there is none)
    unit: str  # the module or file: the split is drawn per unit
    raises: tuple[tuple[str, ast.expr], ...] = ()  # (exception name, message node)


def stdlib_file(module: str) -> Path:
    base = Path(sysconfig.get_paths()["stdlib"]) / module.replace(".", "/")
    return base.with_suffix(".py") if base.with_suffix(".py").exists() else base / "__init__.py"


def _first_paragraph(text: str) -> str:
    paragraph = text.strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def _raised(node: ast.AST) -> tuple[tuple[str, ast.expr], ...]:
    found = []
    for child in ast.walk(node):
        if isinstance(child, ast.Raise) and isinstance(child.exc, ast.Call):
            func = child.exc.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name and child.exc.args:
                found.append((name, child.exc.args[0]))
    return tuple(found)


def python_module(module: str) -> tuple[list[Function], str]:
    """Every function and method of ``module`` and the module's docstring."""
    path = stdlib_file(module)
    relative = module.replace(".", "/") + (".py" if path.name != "__init__.py" else "/__init__.py")
    return python_functions(path.read_text(encoding="utf-8"), relative, module, module)


def python_functions(
    source: str, relative: str, module: str, unit: str
) -> tuple[list[Function], str]:
    """Every function and method of the Python ``source`` (the file ``relative``, keys
    starting with ``module``) and the module's docstring."""
    lines = source.splitlines(keepends=True)
    tree = ast.parse(source)
    found: list[Function] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                start = child.lineno - 1
                end = child.end_lineno or child.lineno
                doc = ast.get_docstring(child) or ""
                body = lines[start:end]
                first = child.body[0]
                if doc and isinstance(first, ast.Expr):
                    cut_from = first.lineno - 1 - start
                    cut_to = (first.end_lineno or first.lineno) - start
                    body = body[:cut_from] + body[cut_to:]
                code = _dedent("".join(body))
                found.append(
                    Function(
                        key=f"{prefix}.{child.name}",
                        path=relative,
                        symbol=child.name,
                        language="python",
                        code=code[:MAX_CHARS],
                        doc=_first_paragraph(doc),
                        unit=unit,
                        raises=_raised(child),
                    )
                )
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}.{child.name}")

    visit(tree, module)
    return found, ast.get_docstring(tree) or ""


def _dedent(text: str) -> str:
    rows = text.splitlines()
    margin = min((len(r) - len(r.lstrip()) for r in rows if r.strip()), default=0)
    return "\n".join(r[margin:] for r in rows).strip("\n")


def lodash_folder() -> Path:
    """The unpacked package, fetched once with ``npm pack`` into the cache folder."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "contextls-relevance"
    folder = cache / LODASH.replace("@", "-")
    if (folder / "package" / "package.json").exists():
        return folder / "package"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(
            ["npm", "pack", LODASH, "--silent"],
            cwd=folder,
            check=True,
            capture_output=True,
            timeout=300,
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise LookupError(f"npm pack {LODASH} failed: {error}") from error
    (tarball,) = folder.glob("*.tgz")
    with tarfile.open(tarball) as archive:
        archive.extractall(folder, filter="data")
    return folder / "package"


_JSDOC = re.compile(r"/\*\*(?:(?!\*/).)*\*/\s*\n(?=(?:function|var|class) )", re.DOTALL)
_EXPORT = re.compile(r"^module\.exports = (\w+);", re.MULTILINE)


def _jsdoc_text(block: str) -> str:
    rows = [re.sub(r"^\s*\*\s?", "", row) for row in block[3:-2].splitlines()]
    description = []
    for row in rows:
        if row.startswith("@"):
            break
        description.append(row)
    return _first_paragraph("\n".join(description))


def lodash_functions() -> list[Function]:
    """One function a file: the exported one, its JSDoc block taken out."""
    found = []
    for path in sorted(lodash_folder().glob("*.js")):
        text = path.read_text(encoding="utf-8")
        export = _EXPORT.search(text)
        if export is None:
            continue
        name = export.group(1)
        doc, code = "", text
        for block in _JSDOC.finditer(text):
            after = text[block.end() :]
            if after.startswith((f"function {name}(", f"var {name} ")):
                doc = _jsdoc_text(block.group(0).rstrip())
                code = text[: block.start()] + after
        code = code.strip()
        if code.count("\n") < 3:  # an alias: module.exports = require('./other')
            continue
        found.append(
            Function(
                key=f"lodash/{path.stem}",
                path=f"lodash/{path.name}",
                symbol=name,
                language="javascript",
                code=code[:MAX_CHARS],
                doc=doc,
                unit=f"lodash/{path.stem}",
            )
        )
    return found
