"""Emacs Lisp's definitions, read as Emacs reads them: the top-level forms of a file
whose head defines something (``defun``, ``defvar``, ``cl-defmethod``, ``define-…-mode``…).

There is no tree-sitter grammar wheel for Emacs Lisp, and Lisp needs none: a form is
its brackets. Strings, comments and character literals (``?\\(``) are skipped so
their brackets do not count; what is left is counted like ``read`` does.
"""

from __future__ import annotations

import bisect
import re
from typing import Final

from contextls.structure.model import Fold, Symbol

_TOKEN: Final = re.compile(
    r"""
      (?P<comment>;[^\n]*)
    | (?P<string>"(?:[^"\\]|\\.)*"?)
    | (?P<char>\?(?:\\[CMSHAs]-|\\\^)*(?:\\.|[^\\]))
    | (?P<open>[(\[])
    | (?P<close>[)\]])
    | (?P<atom>(?:\\.|[^\s()\[\]";'`,])+)
    | (?P<other>\S)
    """,
    re.VERBOSE | re.DOTALL,
)
KINDS: Final[dict[str, str]] = {
    "defun": "function",
    "cl-defun": "function",
    "defsubst": "function",
    "cl-defsubst": "function",
    "define-inline": "function",
    "cl-defmethod": "method",
    "cl-defgeneric": "function",
    "defalias": "function",
    "define-obsolete-function-alias": "function",
    "defmacro": "macro",
    "cl-defmacro": "macro",
    "defvar": "variable",
    "defvar-local": "variable",
    "defcustom": "variable",
    "defconst": "constant",
    "defvaralias": "variable",
    "define-obsolete-variable-alias": "variable",
    "defface": "face",
    "defgroup": "group",
    "cl-defstruct": "struct",
    "define-error": "error",
    "define-minor-mode": "mode",
    "define-globalized-minor-mode": "mode",
    "define-derived-mode": "mode",
    "define-generic-mode": "mode",
}
"""Heads that define a name; any other ``def…``/``define-…`` head is a ``definition``."""


def is_definer(head: str) -> bool:
    return head in KINDS or head.startswith(("def", "cl-def", "define-"))


def forms(text: str) -> list[tuple[int, int, list[str]]]:
    """Each top-level list: its start and end offsets, and its first three atoms (a
    quoted name keeps its quote; a list in second place reads as its own first atom)."""
    found: list[tuple[int, int, list[str]]] = []
    depth, start, second_depth = 0, 0, 0
    atoms: list[str] = []
    for token in _TOKEN.finditer(text):
        group = token.lastgroup
        if group == "open":
            if depth == 0:
                start, atoms, second_depth = token.start(), [], 0
            elif depth == 1 and len(atoms) == 1 and not second_depth:
                second_depth = 2  # (cl-defstruct (name options) …): the name is inside
            depth += 1
        elif group == "close":
            if depth == 0:
                continue  # a stray bracket: Emacs would say "invalid read syntax"
            depth -= 1
            if depth == 0:
                found.append((start, token.end(), atoms))
        elif depth == 1 or (depth == 2 and second_depth == 2 and len(atoms) == 1):
            if group == "atom" and len(atoms) < 3:
                atoms.append(token.group())
            elif group == "other" and token.group() == "'" and len(atoms) < 3:
                atoms.append("'")
            elif group in ("string", "char") and len(atoms) < 3:
                atoms.append("")
    return found


def symbols(text: str) -> list[Symbol]:
    newlines = [m.start() for m in re.finditer("\n", text)]
    done: list[Symbol] = []
    seen: dict[str, int] = {}
    for start, end, atoms in forms(text):
        atoms = [a for a in atoms if a != "'"] if atoms[:1] != ["'"] else atoms
        if len(atoms) < 2 or not is_definer(atoms[0]) or not atoms[1]:
            continue
        name = atoms[1].lstrip("#'")
        if not name or name[0] in '"?':
            continue
        first = bisect.bisect_right(newlines, start) + 1
        last = bisect.bisect_right(newlines, end - 1) + 1
        seen[name] = seen.get(name, 0) + 1
        kind = KINDS.get(atoms[0], "definition")
        code = kind in ("function", "method", "macro")
        fold = _fold(text, newlines, first, last) if code else None
        line = _line(text, newlines, first)
        body = _body_column(line, atoms[1]) if code else -1
        done.append(
            Symbol(
                name, name, kind, first, last, fold=fold, occurrence=seen[name], body_column=body
            )
        )
    return done


def _fold(text: str, newlines: list[int], first: int, last: int) -> Fold | None:
    lines = [_line(text, newlines, n) for n in range(first, last + 1)]
    keep = 1
    if len(lines) > 1 and lines[1].lstrip().startswith('"'):
        keep = 2  # the docstring's first line
    return Fold(first + keep, last) if first + keep <= last else None


def _body_column(line: str, name: str) -> int:
    """Where a one-line definition's body starts: after its argument list."""
    head = re.match(r"\s*\(\s*[^\s()]+\s+#?'?" + re.escape(name), line)
    if head is None:
        return -1
    at = head.end()
    while at < len(line) and line[at] == " ":
        at += 1
    if at >= len(line) or line[at] != "(":
        return -1
    depth = 0
    for column in range(at, len(line)):
        depth += {"(": 1, ")": -1}.get(line[column], 0)
        if depth == 0:
            rest = line[column + 1 :].strip()
            return column + 1 if rest and rest.strip(")") else -1
    return -1


def _line(text: str, newlines: list[int], number: int) -> str:
    begin = newlines[number - 2] + 1 if number >= 2 else 0
    end = newlines[number - 1] if number - 1 < len(newlines) else len(text)
    return text[begin:end]
