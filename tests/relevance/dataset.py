"""The relevance set: an archive of third-party code and the questions asked of it.

Rebuilt on every run from what is installed (``sources``), deterministically:
every choice below is by a hash of a name, never by chance or by a score.

The archive: every function and method of ``MODULES`` (Python's standard
library), each module's docstring as a note, and the functions of the npm
package lodash (JavaScript). The queries, each wanting one document:

- ``docstring``: a function's description, the function without it as the document
  (CodeSearchNet); descriptions that define a function by another ("This method
  is like `_.assign`...", "The base implementation of...") are left out, as are
  descriptions shared by two functions: neither can name one answer;
- ``paraphrase`` and ``pasted error``: written by hand (``asked``), plus the
  questions of the earlier standard-library set (``stdlib.QUERIES``);
- ``error``: the message of a ``raise`` in a function, as Python prints it, its
  ``{}`` and ``%s`` filled with a value as a real error would be;
- ``identifier``: a function's name, where no other function has it;
- ``offtopic`` (``offtopic.OFF_TOPIC``): questions this archive cannot answer.

Split: each unit (a module, or a lodash file) and each off-topic question falls
in ``tune`` or ``held-out`` by a hash of its name. Thresholds may be fitted on
``tune`` only. The earlier set's questions were used to tune the fusion before,
so they are always ``tune``.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache

from . import asked, sources, stdlib
from .offtopic import OFF_TOPIC

MODULES: tuple[str, ...] = (
    *stdlib.MODULES,
    "argparse", "ast", "codecs", "collections", "colorsys", "configparser", "contextlib",
    "dataclasses", "datetime", "dis", "email.utils", "enum", "filecmp", "fileinput",
    "fractions", "ftplib", "functools", "getopt", "gettext", "graphlib", "hmac",
    "http.client", "http.cookiejar", "imaplib", "inspect", "ipaddress", "locale",
    "logging", "logging.handlers", "mailbox", "mimetypes", "netrc", "operator",
    "optparse", "pathlib", "plistlib", "pprint", "queue", "sched", "selectors",
    "smtplib", "socketserver", "ssl", "subprocess", "tarfile", "threading", "timeit",
    "tokenize", "trace", "traceback", "urllib.request", "uuid", "wave", "weakref",
    "webbrowser", "wsgiref.util", "zipapp", "zipfile",
)  # fmt: skip
DOCSTRINGS_PER_MODULE = 5
LODASH_DOCSTRINGS = 150
ERRORS_PER_MODULE = 2
IDENTIFIERS_PER_MODULE = 1
LODASH_IDENTIFIERS = 20
_DEFINED_BY_ANOTHER = re.compile(
    r"^(this method is like|the base implementation|a specialized version|"
    r"alias|same as|see |deprecated|implementation of|like `|a faster alternative)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Document:
    key: str
    path: str
    symbol: str
    kind: str  # "code" or "note"
    language: str
    content: str


@dataclass(frozen=True)
class Query:
    text: str
    wanted: str | None  # a Document.key; None for an off-topic question
    kind: str
    split: str  # "tune" or "held-out"


def _digest(name: str) -> str:
    return hashlib.sha1(name.encode()).hexdigest()


def split_of(unit: str) -> str:
    return "tune" if int(_digest(unit)[:2], 16) < 128 else "held-out"


@cache
def functions() -> tuple[sources.Function, ...]:
    found: list[sources.Function] = []
    for module in MODULES:
        found.extend(sources.python_module(module)[0])
    found.extend(sources.lodash_functions())
    return tuple(found)


@cache
def documents() -> tuple[Document, ...]:
    docs = []
    seen: set[str] = set()
    for function in functions():
        key = function.key
        if key in seen:  # a property's getter and setter: the first is the document
            continue
        seen.add(key)
        docs.append(
            Document(key, function.path, function.symbol, "code", function.language, function.code)
        )
    for module in MODULES:
        text = sources.python_module(module)[1]
        if text.strip():
            path = module.replace(".", "/") + ".py"
            docs.append(Document(f"note:{module}", path, module, "note", "", text))
    return tuple(docs)


def _message(node: ast.expr) -> str | None:
    """The text Python would print for a raise's first argument, or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            else:
                parts.append("'spam'" if getattr(value, "conversion", -1) == 114 else "spam")
        return "".join(parts)
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Mod)
        and isinstance(node.left, ast.Constant)
        and isinstance(node.left.value, str)
    ):
        return re.sub(r"%[-#0 +]*\d*(?:\.\d+)?([srdifxg])", _fill, node.left.value)
    return None


def _fill(match: re.Match[str]) -> str:
    return {"r": "'spam'", "s": "spam"}.get(match.group(1), "42")


def _literal_words(text: str) -> int:
    return len(re.findall(r"[A-Za-z]{2,}", text.replace("spam", "")))


def _ranked(items: list[sources.Function], salt: str) -> list[sources.Function]:
    return sorted(items, key=lambda f: _digest(salt + f.key))


@cache
def queries() -> tuple[Query, ...]:
    funcs = [f for f in functions() if f.key in {d.key for d in documents()}]
    by_key = {f.key: f for f in funcs}
    doc_count = Counter(f.doc for f in funcs if f.doc)
    symbol_count = Counter(f.symbol.lower() for f in funcs)
    contents = [d.content for d in documents()]
    found: list[Query] = []

    def usable_doc(f: sources.Function) -> bool:
        words = f.doc.split()
        return (
            4 <= len(words) <= 60
            and doc_count[f.doc] == 1
            and not _DEFINED_BY_ANOTHER.match(f.doc)
            and not f.doc.lower().startswith(f.symbol.lower() + "(")
        )

    units: dict[str, list[sources.Function]] = {}
    for f in funcs:
        units.setdefault(f.unit if f.language == "python" else "lodash", []).append(f)
    for unit, members in units.items():
        described = [f for f in members if f.doc and usable_doc(f)]
        count = LODASH_DOCSTRINGS if unit == "lodash" else DOCSTRINGS_PER_MODULE
        for f in _ranked(described, "doc")[:count]:
            found.append(Query(f.doc, f.key, "docstring", split_of(f.unit)))
        if unit != "lodash":
            errors = []
            for f in _ranked(members, "error"):
                for exception, node in f.raises:
                    message = _message(node)
                    if message is None or _literal_words(message) < 3:
                        continue
                    literal = max(re.split(r"spam|42|'spam'", message), key=len).strip()
                    if sum(literal in text for text in contents) != 1:
                        continue  # raised in several places: no one answer
                    errors.append(Query(f"{exception}: {message}", f.key, "error", split_of(unit)))
                    break
                if len(errors) == ERRORS_PER_MODULE:
                    break
            found.extend(errors)
        named = [
            f
            for f in members
            if symbol_count[f.symbol.lower()] == 1
            and len(f.symbol) >= 8
            and ("_" in f.symbol.strip("_") or re.search(r"[a-z][A-Z]", f.symbol))
        ]
        count = LODASH_IDENTIFIERS if unit == "lodash" else IDENTIFIERS_PER_MODULE
        for f in _ranked(named, "name")[:count]:
            found.append(Query(f.symbol, f.key, "identifier", split_of(f.unit)))
    wanted = [key for _, key in (*asked.PARAPHRASES, *asked.PASTED_ERRORS, *stdlib.QUERIES)]
    missing = set(wanted) - set(by_key)
    if missing:  # another Python moved them: the set would lie
        raise LookupError(f"not in this Python's standard library: {sorted(missing)}")
    for text, key in asked.PARAPHRASES:
        found.append(Query(text, key, "paraphrase", split_of(by_key[key].unit)))
    for text, key in asked.PASTED_ERRORS:
        found.append(Query(text, key, "pasted error", split_of(by_key[key].unit)))
    for text, key in stdlib.QUERIES:
        found.append(Query(text, key, "paraphrase", "tune"))
    for text in OFF_TOPIC:
        found.append(Query(text, None, "offtopic", split_of(text)))
    return tuple(found)
