"""What a file defines and which names it uses: the facts a repository map ranks.

A file's references are the words of its text that look like names (comments and
strings included: a name mentioned in a docstring is a use a person made), counted;
a definition elsewhere is referenced by a file when one of those words is its name.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Final

from contextls.structure.model import Symbol
from contextls.structure.symbols import symbols

_WORD: Final = re.compile(r"[A-Za-z_$][\w$]*")
_LISP_WORD: Final = re.compile(r"[^\s()\[\]\"';`,#?]+")


@dataclass(frozen=True, slots=True)
class FileFacts:
    language: str
    symbols: list[Symbol]
    words: Counter[str]
    """How often each name-like word appears in the file."""
    headers: dict[int, str]
    """The text of each line that names a definition (for a map), by line number."""


def facts(text: str, language: str) -> FileFacts:
    found = symbols(text, language)
    words = Counter((_LISP_WORD if language == "elisp" else _WORD).findall(text))
    wanted = {s.name_line or s.start_line for s in found} | {s.start_line for s in found}
    lines = text.split("\n") if wanted else []
    headers = {number: lines[number - 1].rstrip() for number in wanted if number <= len(lines)}
    return FileFacts(language, found, words, headers)
