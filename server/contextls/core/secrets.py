"""Secrets that must not slip into an LLM's context unnoticed.

Two checks, both cheap: ``is_secret_path`` (files that usually hold
credentials, skipped when a directory or glob expands, unless named
explicitly) and ``secret_warnings`` (text that looks like a private key or
an access token, warned about on every add: CLI, editors, server). A
warning names the kind of secret and where it is, never the secret itself.
"""

from __future__ import annotations

import re
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
    ".pgpass",
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

_SECRET_TEXT: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{40,})")),
    ("a GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("an OpenAI or Anthropic API key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}")),
    ("a Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("a Stripe secret key", re.compile(r"\b[rs]k_live_[A-Za-z0-9]{20,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    (
        "a password or token assignment",
        re.compile(
            r"(?i)\b(?:api[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token|password|passwd)"
            r"\s*[:=]\s*['\"]?(?=[A-Za-z0-9+/_\-]{20,})(?=[^\s'\"]*\d)(?=[^\s'\"]*[A-Za-z])"
            r"[A-Za-z0-9+/=_\-]{20,}"
        ),
    ),
)


def is_secret_path(path: str | PurePath) -> bool:
    """Whether the file's name says it usually holds credentials (``.env``, ``id_rsa``…)."""
    name = PurePath(path).name.lower()
    return any(fnmatchcase(name, pattern) for pattern in SECRET_FILE_PATTERNS)


def secret_warnings(text: str, where: str) -> list[str]:
    """One message per kind of secret that ``text`` seems to hold (the secret not shown)."""
    found = [kind for kind, pattern in _SECRET_TEXT if pattern.search(text)]
    return [
        f"{where} seems to contain {kind}; it is now in the context an LLM will see "
        "(forget it with `contextls forget` if it should not be)"
        for kind in found
    ]
