"""Files whose name says they usually hold credentials (``.env``, ``id_rsa``, ``.netrc``…):
left out when a folder or a glob expands, unless named; never read to find out."""

from __future__ import annotations

import re
from fnmatch import translate
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


NOT_SECRET_PATTERNS: Final[tuple[str, ...]] = (
    *(f".env.{kind}" for kind in ("example", "sample", "template", "dist", "defaults")),
    "*.pub",
)
"""Names that match the above but are meant to be shared: dotenv templates, the
public halves of SSH keys."""


def _one_pattern(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """``fnmatchcase`` of any of ``patterns`` as one expression (a folder of thousands of
    files asks once per file, not once per pattern)."""
    return re.compile("|".join(f"(?:{translate(pattern)})" for pattern in patterns))


_SECRET: Final = _one_pattern(SECRET_FILE_PATTERNS)
_NOT_SECRET: Final = _one_pattern(NOT_SECRET_PATTERNS)


def is_secret_path(path: str | PurePath) -> bool:
    """Whether the file's name says it usually holds credentials (``.env``, ``id_rsa``…)."""
    name = (path if isinstance(path, PurePath) else PurePath(path)).name.lower()
    if _NOT_SECRET.match(name):
        return False
    return _SECRET.match(name) is not None
