"""Whether a value that looks like a secret is one: written out in full, not a
placeholder, a template, a variable, or code that fetches it (``core.secrets`` asks)."""

from __future__ import annotations

import itertools
import re
from typing import Final

PLACEHOLDERS: Final = frozenset(
    (
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "changeme",
        "change_me",
        "example",
        "xxx",
        "xxxx",
        "xxxxxxxx",
        "none",
        "null",
        "nil",
        "true",
        "false",
        "your_password",
        "yourpassword",
        "mypassword",
        "my_password",
        "pa55word",
        "password123",
        "secret123",
        "redacted",
        "hidden",
        "dummy",
        "test",
        "testing",
    )
)
_CODE_VALUE: Final = re.compile(r"[A-Za-z_][\w.]*(?:\(.*|\[.*)?,?")
"""A name, an attribute, a call or an index: code that reads a password, not one."""


def looks_random(value: str) -> bool:
    """Letters and digits mixed as no name is (``Xk9vQ2mZ7pLr4Tb8``; not ``user_pw2``, not
    ``GetPassCallable``): letters and digits only, digits and letters alternating at least
    three times, and the kind of character changing at least five times."""
    if not value.isalnum() or not value.isascii():
        return False
    kinds = ["d" if c.isdigit() else "u" if c.isupper() else "l" for c in value]
    changes = [(a, b) for a, b in itertools.pairwise(kinds) if a != b]
    return len(changes) >= 5 and sum("d" in change for change in changes) >= 3


def looks_like_a_password(value: str, quoted: bool = False) -> bool:
    """A value written out in full: not a placeholder, a template or a variable, not code
    that fetches it, and not all letters (a word). A quoted value is a string, whatever
    it looks like; an unquoted one that reads like a name must look random."""
    cleaned = value.strip("'\",;)")
    if len(cleaned) < 8 or cleaned.lower() in PLACEHOLDERS:
        return False
    if cleaned.startswith("$") or any(mark in cleaned for mark in ("${", "{{", "%(", "%s")):
        return False  # a variable or a template: the password is elsewhere
    if (cleaned.startswith("<") and cleaned.endswith(">")) or set(cleaned) <= set("*xX•."):
        return False  # <your password here>, ******
    if _CODE_VALUE.fullmatch(cleaned) and not (quoted or looks_random(cleaned)):
        return False
    # A digit, or three kinds of character: "geheim$parole" in a docstring is a word game.
    kinds = [
        any(c.islower() for c in cleaned),
        any(c.isupper() for c in cleaned),
        any(not c.isalnum() for c in cleaned),
    ]
    return any(c.isdigit() for c in cleaned) or all(kinds)


def looks_like_a_user_password(match: re.Match[str]) -> bool:
    """The password part of ``scheme://user:password@host``: not a placeholder, and not a
    short word (``http://evil:thing@example.com`` in a test is an example)."""
    value = match.group("value")
    if value.lower() in PLACEHOLDERS or any(c in value for c in "${}<>*%"):
        return False
    return len(value) >= 12 or (len(value) >= 6 and not value.isalpha())


def a_password(match: re.Match[str]) -> bool:
    groups = match.groupdict()
    return looks_like_a_password(match.group("value"), quoted=bool(groups.get("q")))


def basic_credentials(match: re.Match[str]) -> bool:
    """Base64 of ``user:password`` with a password that is not a placeholder."""
    import base64
    import binascii

    try:
        decoded = base64.b64decode(match.group("value"), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon and user) and len(password) >= 6 and password.lower() not in PLACEHOLDERS


def a_yaml_word(value: str) -> bool:
    """An all-letter value after a password key at the end of its line: a password a
    person chose, not YAML's own words, a placeholder, or a type named in code."""
    return value.lower() not in PLACEHOLDERS | NOT_A_PASSWORD


NOT_A_PASSWORD: Final = frozenset(
    {"true", "false", "null", "none", "required", "optional", "secretstr", "string"}
    | {"password", "passwords", "nullable", "readonly", "writeonly", "sensitive", "redacted"}
)
