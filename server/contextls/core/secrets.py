"""Secrets that must not slip into an LLM's context unnoticed.

Two checks, both cheap: ``is_secret_path`` (files that usually hold
credentials, skipped when a directory or glob expands, unless named
explicitly) and ``secret_warnings`` (text that looks like a private key or
an access token, warned about on every add: CLI, editors, server). A
warning names the kind of secret and where it is, never the secret itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import PurePath
from typing import Final

SECRET_FILE_PATTERNS: Final[tuple[str, ...]] = (
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".envrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".htpasswd",
    "credentials",
    "*.credentials",
    *(
        f"{stem}.{ext}"
        for stem in ("credentials", "secrets", "secret")
        for ext in ("json", "yaml", "yml", "toml", "ini", "env", "txt", "csv", "xml")
    ),
    "*.secret",
    "*.secrets",
    "service-account*.json",
    "*.tfvars",
)
"""Names (lower-cased) of files that usually hold credentials."""


def _any_case(pattern: str) -> str:
    """``api`` → ``[aA][pP][iI]``: case-blind without ``(?i)``, which defeats the
    search for a pattern's first characters (5x slower over a large text)."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in pattern)


# Each pattern starts with literal characters, so ``re`` can skip ahead to them;
# the word boundary before a token is checked on each (rare) match instead of with
# a leading ``\b``, which made every pattern try every position: 515 ms for 1 MB of
# code, on an add's path, against ~25 ms now.
@dataclass(frozen=True)
class _Kind:
    """One kind of secret text, and what a match of it must satisfy."""

    name: str
    needs: tuple[str, ...]
    """Text the kind cannot match without: ``in`` rules most kinds out for a short
    text in ~50 ns, where running the expression costs ~1 us (every add is scanned)."""
    pattern: re.Pattern[str]
    after: str = ""
    """A character the match must follow (the rest: a non-word character)."""
    anywhere: bool = False
    """Found inside longer names too (``DB_PASSWORD=…``, ``STRIPE_API_KEY=…``)."""

    def standalone(self, text: str, match: re.Match[str]) -> bool:
        if self.anywhere:
            return True
        start = match.start()
        if self.after:
            if start == 0 or text[start - 1] not in self.after:
                return False
            start -= 1
        return start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")

    def found_in(self, text: str) -> bool:
        return any(needed in text for needed in self.needs) and any(
            self.standalone(text, match) for match in self.pattern.finditer(text)
        )


_ASSIGNMENT: Final = _Kind(
    "a password or token assignment",
    ("=", ":"),
    re.compile(
        "(?:"
        + "|".join(
            _any_case(word)
            for word in (
                "api[_-]?key",
                "secret[_-]?key",
                "access[_-]?token",
                "auth[_-]?token",
                "password",
                "passwd",
            )
        )
        + r")\s*[:=]\s*['\"]?(?=[A-Za-z0-9+/_\-]{20,})(?=[^\s'\"]*\d)(?=[^\s'\"]*[A-Za-z])"
        r"[A-Za-z0-9+/=_\-]{20,}"
    ),
    anywhere=True,
)
_SECRET_TEXT: Final[tuple[_Kind, ...]] = (
    _Kind(
        "a private key",
        ("PRIVATE KEY",),
        re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    ),
    _Kind("an AWS access key id", ("AKIA", "ASIA"), re.compile(r"(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    _Kind(
        "a GitHub token",
        ("_",),
        re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{40,})"),
    ),
    _Kind("a GitLab token", ("glpat-",), re.compile(r"glpat-[A-Za-z0-9_-]{20,}")),
    _Kind(
        "an OpenAI or Anthropic API key",
        ("sk-",),
        re.compile(r"sk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}"),
    ),
    _Kind("a Slack token", ("xox",), re.compile(r"xox[abprs]-[A-Za-z0-9-]{10,}")),
    _Kind("a Stripe secret key", ("k_live_",), re.compile(r"k_live_[A-Za-z0-9]{20,}"), after="rs"),
    _Kind("a Google API key", ("AIza",), re.compile(r"AIza[0-9A-Za-z_-]{35}\b")),
    _ASSIGNMENT,
)


NOT_SECRET_PATTERNS: Final[tuple[str, ...]] = (
    *(f".env.{kind}" for kind in ("example", "sample", "template", "dist", "defaults")),
    "*.pub",
)
"""Names that match the above but are meant to be shared: dotenv templates, the
public halves of SSH keys."""


def is_secret_path(path: str | PurePath) -> bool:
    """Whether the file's name says it usually holds credentials (``.env``, ``id_rsa``…)."""
    name = PurePath(path).name.lower()
    if any(fnmatchcase(name, pattern) for pattern in NOT_SECRET_PATTERNS):
        return False
    return any(fnmatchcase(name, pattern) for pattern in SECRET_FILE_PATTERNS)


def secret_warnings(text: str, where: str) -> list[str]:
    """One message per kind of secret that ``text`` seems to hold (the secret not shown)."""
    found = [kind for kind in _SECRET_TEXT if kind.found_in(text)]
    if len(found) > 1:  # a named kind says more than "an assignment" of the same token
        found = [kind for kind in found if kind is not _ASSIGNMENT]
    return [
        f"{where} seems to contain {kind.name}; it is now in the context an LLM will see "
        "(forget it with `contextls forget` if it should not be)"
        for kind in found
    ]
