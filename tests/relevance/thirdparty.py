"""Functions of packages nobody here had used, from PyPI and npm, their descriptions out.

A second relevance set beside ``dataset`` (Python's standard library and lodash), built
to judge search on code of other authors, languages and naming habits: camelCase
JavaScript and TypeScript beside snake_case Python. Fetched once with the ordinary
clients (``pip download``, ``npm pack``) into the cache folder, never copied into this
repository, read as files, never imported:

- tuning packages (thresholds and weights may be fitted on them): ``arrow``,
  ``humanize``, ``inflection`` (PyPI) and ``voca`` (npm);
- held-out packages (looked at only to report): ``networkx`` (its algorithms) and
  ``funcy`` (PyPI), ``luxon`` and ``mathjs`` (npm, JavaScript) and ``es-toolkit`` (npm,
  TypeScript: each function's declarations from its ``.d.mts`` above its body).

A whole package falls on one side, so nothing fitted has seen a held-out package's
names, style or comments. A function's description (its docstring's first paragraph,
or its JSDoc text before the first tag) is taken out of its code, the CodeSearchNet
method; JavaScript and TypeScript functions are found by the server's own parser
(``contextls.structure``), each with the JSDoc block right above it.
"""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
import zipfile
from functools import cache
from pathlib import Path

from contextls.structure.symbols import symbols

from .sources import MAX_CHARS, Function, python_functions

PYPI: dict[str, str] = {
    "arrow": "arrow==1.3.0",
    "humanize": "humanize==4.17.0",
    "inflection": "inflection==0.5.1",
    "networkx": "networkx==3.4.2",
    "funcy": "funcy==2.0",
}
NPM: dict[str, str] = {
    "voca": "voca@1.4.1",
    "luxon": "luxon@3.7.2",
    "mathjs": "mathjs@15.2.0",
    "es-toolkit": "es-toolkit@1.53.2",
}
TUNE: frozenset[str] = frozenset({"arrow", "humanize", "inflection", "voca"})
PACKAGES: tuple[str, ...] = (*PYPI, *NPM)
NETWORKX_FOLDERS = ("", "shortest_paths", "centrality", "components", "traversal", "flow")
ES_TOOLKIT_FOLDERS = ("array", "function", "math", "object", "predicate", "promise", "string")


def split_of_package(package: str) -> str:
    return "tune" if package in TUNE else "held-out"


def _cache() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "contextls-relevance" / "thirdparty"


def _run(argv: list[str], cwd: Path) -> None:
    try:
        subprocess.run(argv, cwd=cwd, check=True, capture_output=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as error:
        raise LookupError(f"{' '.join(argv)} failed: {error}") from error


def package_folder(package: str) -> Path:
    """The unpacked package (a wheel's files, or an npm tarball's ``package/``)."""
    folder = _cache() / package
    done = folder / ".unpacked"
    if not done.exists():
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*"):
            if old.is_file():
                old.unlink()
        if package in PYPI:
            _run(["pip", "download", "--no-deps", "-q", "-d", ".", PYPI[package]], folder)
            (wheel,) = folder.glob("*.whl")
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(folder / "files")
        else:
            _run(["npm", "pack", NPM[package], "--silent"], folder)
            (tarball,) = folder.glob("*.tgz")
            with tarfile.open(tarball) as archive:
                archive.extractall(folder / "files", filter="data")
        done.touch()
    files = folder / "files"
    return files / "package" if package in NPM else files


def _python_files(package: str) -> list[tuple[Path, str]]:
    root = package_folder(package)
    if package == "inflection":
        return [(root / "inflection.py", "inflection.py")]
    if package == "networkx":
        paths = []
        for sub in NETWORKX_FOLDERS:
            folder = root / "networkx" / "algorithms" / sub
            paths.extend(p for p in sorted(folder.glob("*.py")) if p.name != "__init__.py")
    elif package == "arrow":
        paths = [p for p in sorted((root / "arrow").glob("*.py")) if p.name != "locales.py"]
    else:
        paths = sorted((root / package).rglob("*.py"))
    return [
        (path, path.relative_to(root).as_posix()) for path in paths if "tests" not in path.parts
    ]


def python_package(package: str) -> list[Function]:
    found: list[Function] = []
    for path, relative in _python_files(package):
        module = relative.removesuffix(".py").replace("/", ".")
        functions, _ = python_functions(path.read_text(encoding="utf-8"), relative, module, package)
        found.extend(functions)
    return found


_JSDOC_END = re.compile(r"\*/\s*$")
_TAG = re.compile(r"^@\w+")


def _jsdoc_above(lines: list[str], first: int) -> tuple[int, str] | None:
    """(the 0-based line the JSDoc block right above line ``first`` starts on, its
    description), or None when there is none."""
    end = first - 1
    while end >= 0 and not lines[end].strip():
        end -= 1
    if end < 0 or not _JSDOC_END.search(lines[end]):
        return None
    start = end
    while start >= 0 and "/**" not in lines[start]:
        start -= 1
    if start < 0:
        return None
    return start, _description(lines[start : end + 1])


def _description(block: list[str]) -> str:
    """A JSDoc block's first paragraph before its tags, in one line."""
    text = "\n".join(block).strip()
    text = text.removeprefix("/**").removesuffix("*/")
    rows = []
    for row in text.splitlines():
        row = re.sub(r"^\s*\*\s?", "", row)
        if _TAG.match(row.strip()):
            break
        rows.append(row)
    paragraph = "\n".join(rows).strip().split("\n\n", 1)[0]
    return " ".join(re.sub(r"<[^>]+>", "", paragraph).split())


def _dedent(text: str) -> str:
    rows = text.splitlines()
    margin = min((len(r) - len(r.lstrip()) for r in rows if r.strip()), default=0)
    return "\n".join(r[margin:] for r in rows).strip("\n")


def js_functions(text: str, language: str, relative: str, key: str, unit: str) -> list[Function]:
    """Functions and methods of a JavaScript or TypeScript file (not those nested in a
    function), each without the JSDoc block right above it."""
    lines = text.splitlines()
    found = []
    kinds = {s.qualified: s.kind for s in symbols(text, language)}
    for symbol in symbols(text, language):
        if symbol.kind not in ("function", "method") or symbol.occurrence > 1:
            continue
        if symbol.parent is not None and kinds.get(symbol.parent) in ("function", "method"):
            continue
        above = _jsdoc_above(lines, symbol.start_line - 1)
        code = _dedent("\n".join(lines[symbol.start_line - 1 : symbol.end_line]))
        if code.count("\n") < 1:
            continue
        found.append(
            Function(
                key=f"{key}:{symbol.qualified}",
                path=relative,
                symbol=symbol.name,
                language=language,
                code=code[:MAX_CHARS],
                doc=above[1] if above else "",
                unit=unit,
            )
        )
    return found


def _mathjs() -> list[Function]:
    """One function a file: a factory whose JSDoc (inside it) describes the function."""
    root = package_folder("mathjs") / "lib" / "esm" / "function"
    found = []
    for path in sorted(root.rglob("*.js")):
        text = path.read_text(encoding="utf-8")
        name = re.search(r"^var name = '(\w+)';", text, re.MULTILINE)
        block = re.search(r"/\*\*(?:(?!\*/).)*?Syntax:(?:(?!\*/).)*\*/\n", text, re.DOTALL)
        if name is None or block is None:
            continue
        doc = _description(block.group(0).splitlines())
        code = (text[: block.start()] + text[block.end() :]).strip()
        relative = f"mathjs/{path.relative_to(root).as_posix()}"
        found.append(
            Function(
                key=f"mathjs/{path.relative_to(root).with_suffix('').as_posix()}",
                path=relative,
                symbol=name.group(1),
                language="javascript",
                code=code[:MAX_CHARS],
                doc=doc,
                unit="mathjs",
            )
        )
    return found


_DECLARE = re.compile(r"^export declare function .*?;$", re.MULTILINE | re.DOTALL)


def _es_toolkit() -> list[Function]:
    """Each function as TypeScript: its declarations (``.d.mts``) above its body (``.mjs``)."""
    root = package_folder("es-toolkit") / "dist"
    found = []
    for folder in ES_TOOLKIT_FOLDERS:
        for path in sorted((root / folder).glob("*.mjs")):
            if path.stem == "index":
                continue
            declared = path.with_suffix(".d.mts")
            text = path.read_text(encoding="utf-8")
            types = declared.read_text(encoding="utf-8") if declared.exists() else ""
            heads = [
                re.sub(r"/\*\*.*?\*/\s*", "", d.group(0), flags=re.DOTALL).replace(" declare", "")
                for d in _DECLARE.finditer(types)
            ]
            relative = f"es-toolkit/src/{folder}/{path.stem}.ts"
            for function in js_functions(text, "javascript", relative, relative, "es-toolkit"):
                if function.symbol != path.stem:
                    continue
                signatures = [h for h in heads if re.search(rf"function {function.symbol}\b", h)]
                code = "\n".join([*signatures, "export " + function.code])
                found.append(
                    Function(
                        function.key.replace(".ts:", ":"),
                        relative,
                        function.symbol,
                        "typescript",
                        code[:MAX_CHARS],
                        function.doc,
                        "es-toolkit",
                    )
                )
    return found


def _voca() -> list[Function]:
    root = package_folder("voca") / "es"
    found = []
    for path in sorted(root.glob("*.js")):
        if path.stem == "index":
            continue
        relative = f"voca/{path.name}"
        found.extend(js_functions(path.read_text(encoding="utf-8"), "javascript", relative,
                                  relative, "voca"))  # fmt: skip
    return found


def _luxon() -> list[Function]:
    root = package_folder("luxon") / "src"
    found = []
    for name in ("datetime.js", "duration.js", "interval.js", "info.js"):
        relative = f"luxon/{name}"
        text = (root / name).read_text(encoding="utf-8")
        found.extend(js_functions(text, "javascript", relative, relative, "luxon"))
    return found


@cache
def functions(package: str) -> tuple[Function, ...]:
    if package in PYPI:
        return tuple(python_package(package))
    return tuple({"mathjs": _mathjs, "es-toolkit": _es_toolkit, "voca": _voca,
                  "luxon": _luxon}[package]())  # fmt: skip
