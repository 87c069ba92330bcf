"""Questions and archives of the third-party set (``thirdparty``): the figures the search
is judged by, on packages nobody tuned on, and a tuning side to fit on.

Queries, each wanting one function (``key``):

- ``docstring``: the function's own description, the function without it as the
  document (CodeSearchNet), when it has 4 to 60 words, is shared by no other function
  and does not define the function by another;
- ``name words``: the words of a camelCase or snake_case name, as a person types
  them ("is weekend" for ``isWeekend``), when no other name has the same words;
- ``identifier``: a name as written (``isWeekend``, ``find_cycle``), when unique;
- ``error``: the literal message of a ``raise`` or ``throw`` in it, when unique;
- ``paraphrase`` and ``pasted error``: written by hand (``thirdparty_asked``);
- ``offtopic``: questions no code archive answers (``thirdparty_asked.OFF_TOPIC``), a
  third of them on the tuning side (by a hash), two thirds held out.

Archives: on each side, the functions in an order drawn by a hash, Python and
JavaScript/TypeScript taking turns, cut at about 100, 300 and 600 documents (the
tuning side has fewer functions: its largest takes them all), asked every question
whose function is in it and every off-topic question of that side.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from functools import cache

from . import sources, thirdparty
from .dataset import Document, Query
from .thirdparty_asked import OFF_TOPIC, PARAPHRASES, PASTED_ERRORS

SIZES = (100, 300, 600)
_DEFINED_BY_ANOTHER = re.compile(
    r"^(this method is like|the base implementation|a specialized version|alias|same as|"
    r"see |deprecated|implementation of|like `|a faster alternative|@deprecated)",
    re.IGNORECASE,
)
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_THROW = re.compile(r"""throw new (\w*Error)\((['"`])((?:(?!\2).){12,}?)\2\)""")
_STOP = frozenset({"is", "to", "of", "by", "in", "on", "at", "as", "the", "a", "an", "and",
                   "or", "for", "get", "set", "from", "with", "has", "all"})  # fmt: skip


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def name_words(symbol: str) -> list[str]:
    """The words of a name: ``isWeekend`` -> is, weekend; ``find_cycle`` -> find, cycle."""
    return [w.lower() for part in symbol.split("_") for w in _CAMEL.findall(part)]


def offtopic_split(text: str) -> str:
    return "tune" if int(_digest(text)[:2], 16) < 86 else "held-out"


@cache
def functions() -> tuple[sources.Function, ...]:
    found: list[sources.Function] = []
    seen: set[str] = set()
    for package in thirdparty.PACKAGES:
        for function in thirdparty.functions(package):
            if function.key not in seen:
                seen.add(function.key)
                found.append(function)
    return tuple(found)


def package_of(function: sources.Function) -> str:
    return function.key.split(".", 1)[0] if function.language == "python" else function.unit


def side_of(function: sources.Function) -> str:
    return thirdparty.split_of_package(package_of(function))


def document(function: sources.Function) -> Document:
    return Document(
        function.key, function.path, function.symbol, "code", function.language, function.code
    )


@cache
def queries() -> tuple[Query, ...]:
    funcs = functions()
    by_key = {f.key: f for f in funcs}
    docs = Counter(f.doc for f in funcs if f.doc)
    symbols = Counter(f.symbol.lower() for f in funcs)
    words_of = {f.key: " ".join(name_words(f.symbol)) for f in funcs}
    words_count = Counter(words_of.values())
    contents = [f.code for f in funcs]
    found: list[Query] = []
    for f in funcs:
        side = side_of(f)
        words = f.doc.split()
        if (
            4 <= len(words) <= 60
            and docs[f.doc] == 1
            and not _DEFINED_BY_ANOTHER.match(f.doc)
            and not f.doc.lower().startswith(f.symbol.lower() + "(")
        ):
            found.append(Query(f.doc, f.key, "docstring", side))
        parts = name_words(f.symbol.strip("_"))
        telling = [p for p in parts if p not in _STOP and len(p) >= 4]
        if len(parts) >= 2 and telling and words_count[words_of[f.key]] == 1:
            found.append(Query(" ".join(parts), f.key, "name words", side))
        if symbols[f.symbol.lower()] == 1 and len(f.symbol) >= 8 and len(parts) >= 2:
            found.append(Query(f.symbol, f.key, "identifier", side))
        for message in _errors(f):
            if sum(message in text for text in contents) == 1:
                found.append(Query(message, f.key, "error", side))
                break
    asked = [*PARAPHRASES, *PASTED_ERRORS]
    missing = {key for _, key in asked} - set(by_key)
    if missing:
        raise LookupError(f"not among the packages' functions: {sorted(missing)}")
    for text, key in PARAPHRASES:
        found.append(Query(text, key, "paraphrase", side_of(by_key[key])))
    for text, key in PASTED_ERRORS:
        found.append(Query(text, key, "pasted error", side_of(by_key[key])))
    for text in OFF_TOPIC:
        found.append(Query(text, None, "offtopic", offtopic_split(text)))
    return tuple(found)


def _errors(function: sources.Function) -> list[str]:
    """Literal messages of what it raises or throws, with three words at least."""
    messages = []
    for _, node in function.raises:
        text = node.value if hasattr(node, "value") and isinstance(node.value, str) else None
        if text:
            messages.append(text)
    messages.extend(match.group(3) for match in _THROW.finditer(function.code))
    return [m for m in messages if len(re.findall(r"[A-Za-z]{2,}", m)) >= 3 and "{" not in m]


def ordered(side: str) -> list[sources.Function]:
    """The side's functions in the order archives take them: Python and JavaScript or
    TypeScript taking turns, each in an order drawn by a hash of its key."""
    funcs = [f for f in functions() if side_of(f) == side]
    python = sorted((f for f in funcs if f.language == "python"), key=lambda f: _digest(f.key))
    other = sorted((f for f in funcs if f.language != "python"), key=lambda f: _digest(f.key))
    turns: list[sources.Function] = []
    for n in range(max(len(python), len(other))):
        turns.extend(group[n] for group in (python, other) if n < len(group))
    return turns


def archive(side: str, size: int) -> tuple[tuple[Document, ...], tuple[Query, ...]]:
    """``size`` functions of the side and every question they answer: the functions
    hand-written questions ask for first (at most a third of them), then the rest in
    their order."""
    asked_for = {key for _, key in (*PARAPHRASES, *PASTED_ERRORS)}
    order = ordered(side)
    first = [f for f in order if f.key in asked_for][: size // 3]
    chosen = {f.key for f in first}
    taken = first + [f for f in order if f.key not in chosen][: size - len(first)]
    keys = {f.key for f in taken}
    asked = tuple(
        q for q in queries() if (q.wanted in keys) or (q.wanted is None and q.split == side)
    )
    return tuple(document(f) for f in taken), asked


def language_of(key: str) -> str:
    """ "python" or "js" (JavaScript and TypeScript) for a function's key."""
    return "python" if {f.key: f for f in functions()}[key].language == "python" else "js"
