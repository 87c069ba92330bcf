"""Secrets that must not slip into an LLM's context unnoticed.

Two checks, both cheap: ``is_secret_path`` (files that usually hold credentials,
skipped when a directory or glob expands, unless named explicitly;
``core.secret_paths``) and ``secret_warnings`` (text that looks like a private key
or an access token, warned about on every add: CLI, editors, server). A warning
names the kind of secret and where it is, never the secret itself.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from contextls.core.secret_paths import is_secret_path
from contextls.core.secret_values import (
    PLACEHOLDERS,
    a_password,
    a_yaml_word,
    basic_credentials,
    looks_like_a_password,
    looks_like_a_user_password,
)
from contextls.protocol import DidWarnParams, SecretFound

__all__ = [
    "is_secret_path",
    "secret_message",
    "secret_warnings",
    "secrets_in",
    "warning_of",
    "words_of",
]


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
    real: Callable[[re.Match[str]], bool] | None = None
    """A test of the match (its ``value`` group, its quotes): a value, not a placeholder
    or a name."""
    needs_folded: tuple[str, ...] = ()
    """Lower-case text the kind cannot match without, looked for in the lower-cased text
    (its expression is case-blind, so ``needs`` cannot rule it out)."""
    shape: re.Pattern[str] | None = None
    """A cheap expression the text must match first (one that starts with a literal
    character ``re`` can skip to), for a kind whose own expression cannot start so."""

    def standalone(self, text: str, match: re.Match[str]) -> bool:
        if self.anywhere:
            return True
        start = match.start()
        if self.after:
            if start == 0 or text[start - 1] not in self.after:
                return False
            start -= 1
        return start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")

    def found_in(self, text: str, folded: str) -> bool:
        if not any(needed in text for needed in self.needs):
            return False
        if self.needs_folded and not any(needed in folded for needed in self.needs_folded):
            return False
        if self.shape is not None and self.shape.search(text) is None:
            return False
        return any(
            self.standalone(text, match) and (self.real is None or self.real(match))
            for match in self.pattern.finditer(text)
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
    needs_folded=("api", "secret", "access", "auth", "passw"),
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
    _Kind(
        "a GitLab token",
        ("glpat-", "glrt-", "gldt-", "glptt-"),
        re.compile(r"gl(?:pat|rt|dt|ptt)-[A-Za-z0-9_-]{20,}"),
    ),
    _Kind(
        "an OpenAI or Anthropic API key",
        ("sk-",),
        re.compile(r"sk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}"),
    ),
    _Kind("a Slack token", ("xox",), re.compile(r"xox[abprs]-[A-Za-z0-9-]{10,}")),
    _Kind("a Stripe secret key", ("k_live_",), re.compile(r"k_live_[A-Za-z0-9]{20,}"), after="rs"),
    _Kind("a Stripe webhook secret", ("whsec_",), re.compile(r"whsec_[A-Za-z0-9]{24,}")),
    _Kind("a Google API key", ("AIza",), re.compile(r"AIza[0-9A-Za-z_-]{35}\b")),
    _Kind(
        "an AWS secret access key",
        ("ccess_key", "CCESS_KEY", "ccessKey"),
        re.compile(
            "(?:"
            + "|".join(
                _any_case(name)
                for name in (
                    "aws_secret_access_key",
                    "secret_access_key",
                    "secretaccesskey",
                    "aws_secret",
                )
            )
            + r")['\"]?\s*[:=]\s*['\"]?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])"
        ),
        anywhere=True,
    ),
    _Kind(
        "a JSON Web Token",
        ("eyJ",),
        re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ),
    _Kind(
        "a user and password in a URL",
        ("://",),
        re.compile(
            r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@'\"]*:(?P<value>[^\s:/@'\"]{3,})@[A-Za-z0-9.-]+"
        ),
        real=looks_like_a_user_password,
    ),
    _Kind(
        "an Azure storage account key",
        ("AccountKey=",),
        re.compile(r"AccountKey=[A-Za-z0-9+/]{40,}={0,2}"),
        anywhere=True,
    ),
    _Kind(
        "a Slack webhook",
        ("hooks.slack.com",),
        re.compile(r"hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{20,}"),
        anywhere=True,
    ),
    _Kind("a Slack app token", ("xapp-",), re.compile(r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{20,}")),
    _Kind(
        "a SendGrid API key",
        ("SG.",),
        re.compile(r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    ),
    _Kind("a Twilio API key", ("SK",), re.compile(r"SK[0-9a-f]{32}\b")),
    _Kind(
        "a Telegram bot token",
        (":AA",),
        re.compile(r"[0-9]{8,10}:AA[0-9A-Za-z_-]{33}\b"),
    ),
    _Kind("a DigitalOcean token", ("_v1_",), re.compile(r"do[opr]_v1_[a-f0-9]{64}\b")),
    _Kind("a Shopify token", ("shp",), re.compile(r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b")),
    _Kind("an npm token", ("npm_",), re.compile(r"npm_[A-Za-z0-9]{36}\b")),
    _Kind("a PyPI token", ("pypi-",), re.compile(r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}")),
    _Kind("a Hugging Face token", ("hf_",), re.compile(r"hf_[A-Za-z0-9]{34}\b")),
    _Kind(
        "a Discord bot token",
        (".",),
        re.compile(
            r"(?<![A-Za-z0-9_-])[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b"
        ),
        shape=re.compile(r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}"),
    ),
    _Kind(
        "a Django SECRET_KEY",
        ("SECRET_KEY",),
        re.compile(r"SECRET_KEY\s*=\s*(?P<q>['\"]?)(?P<value>[^'\"\s]{20,})(?P=q)"),
        anywhere=True,
        real=a_password,
    ),
    _Kind(
        "a password",
        ("ASSWORD", "assword", "ASSWD", "asswd"),
        re.compile(
            r"(?:[A-Za-z0-9]*_)?(?:PASSWORD|PASSWD|[Pp]assword|[Pp]asswd)['\"]?\s*[:=]\s*"
            r"(?P<q>['\"]?)(?P<value>[^\s'\"#&;]{8,})(?P=q)(?=\s|$|,|;|&|#|\))"
        ),
        anywhere=True,
        real=a_password,
    ),
    _Kind(
        "a password in a .netrc",
        ("machine",),
        re.compile(r"(?m)(?:^|\s)password\s+(?P<value>[^\s\\]{6,})(?=\s|$)"),
        anywhere=True,
        real=a_password,
        shape=re.compile(r"machine\s+\S+"),
    ),
    _Kind(
        "a password in a .pgpass",
        (":",),
        re.compile(r"(?m)^[\w.-]+:(?:\d{2,5}|\*):[\w.*-]+:[\w.*-]+:(?P<value>[^\s:]{6,})$"),
        anywhere=True,
        real=a_password,
        shape=re.compile(r":(?:\d{2,5}|\*):[\w.*-]+:[\w.*-]+:[^\s:]{6,}\n?$", re.M),
    ),
    _Kind(
        "an Azure shared access signature",
        ("sig=",),
        re.compile(r"[?&]sig=(?P<value>[A-Za-z0-9%+/=]{30,})"),
        anywhere=True,
        needs_folded=("sv=",),
    ),
    _Kind(
        "an Azure shared access key",
        ("SharedAccessKey=",),
        re.compile(r"SharedAccessKey=[A-Za-z0-9+/]{32,}={0,2}"),
        anywhere=True,
    ),
    _Kind(
        "a client secret",
        ("ECRET", "ecret"),
        re.compile(
            r"(?:[A-Za-z0-9]*_)?(?:CLIENT_SECRET|[Cc]lient_?[Ss]ecret)['\"]?\s*[:=]\s*"
            r"(?P<q>['\"]?)(?P<value>[A-Za-z0-9~._\-]{16,})(?P=q)"
        ),
        anywhere=True,
        real=a_password,
    ),
    _Kind(
        "an npm auth setting",
        ("_auth",),
        re.compile(r"_auth(?:Token)?\s*=\s*(?P<value>[A-Za-z0-9+/=_-]{16,})"),
        anywhere=True,
        real=lambda match: looks_like_a_password(match.group("value"), quoted=True),
    ),
    _Kind(
        "a Docker registry login",
        ('"auth"',),
        re.compile(r'"auth"\s*:\s*"(?P<value>[A-Za-z0-9+/]{12,}={0,2})"'),
        anywhere=True,
        real=basic_credentials,
        needs_folded=("auths",),
    ),
    _Kind(
        "HTTP basic credentials",
        ("Basic ",),
        re.compile(r"[Bb]asic (?P<value>[A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])"),
        anywhere=True,
        real=basic_credentials,
        needs_folded=("authorization",),
    ),
    _Kind(
        "a password in a JDBC URL",
        ("jdbc:",),
        re.compile(r"jdbc:[^\s'\"]*?[?&;:]passw(?:or)d=(?P<value>[^\s&;'\"]{4,})"),
        anywhere=True,
        real=lambda match: (
            match.group("value").lower() not in PLACEHOLDERS
            and not any(c in match.group("value") for c in "${}<>*%")
        ),
    ),
    _Kind(
        "a PuTTY private key",
        ("PuTTY-User-Key-File-",),
        re.compile(r"PuTTY-User-Key-File-\d+: \S+"),
        shape=re.compile(r"Private-Lines: \d+"),
    ),
    _Kind(
        "a password in YAML",
        ("assword:", "asswd:", "ASSWORD:"),
        re.compile(
            r"(?m)^[ \t-]*(?:[A-Za-z0-9]*_)?(?:[Pp]assword|PASSWORD|[Pp]asswd)[ \t]*:[ \t]+"
            r"(?P<q>['\"]?)(?P<value>[A-Za-z]{8,})(?P=q)[ \t]*(?:#.*)?$"
        ),
        anywhere=True,
        real=lambda match: a_yaml_word(match.group("value")),
    ),
    _ASSIGNMENT,
)


REMEMBERED_FROM: Final = 64 * 1024
"""A text this long is scanned once (~20 ms for 900 KB): the add of a large text scans it
in a worker thread first, and the add on the event loop then finds it scanned."""


def secrets_in(text: str) -> list[str]:
    """What kinds of secret ``text`` seems to hold, in words ("a private key"), each once."""
    if len(text) >= REMEMBERED_FROM:
        return list(_scanned(text))
    return _scan(text)


@functools.lru_cache(maxsize=8)
def _scanned(text: str) -> tuple[str, ...]:
    return tuple(_scan(text))


def _scan(text: str) -> list[str]:
    folded = text.lower()
    found = [kind for kind in _SECRET_TEXT if kind.found_in(text, folded)]
    if len(found) > 1:  # a named kind says more than "an assignment" of the same token
        found = [kind for kind in found if kind is not _ASSIGNMENT]
    return [kind.name for kind in found]


def secret_message(where: str, found: str) -> str:
    """The warning that ``where`` seems to hold ``found`` (the secret not shown)."""
    return (
        f"{where} seems to contain {found}; it is now in the context an LLM will see "
        "(forget it for good if it should not be)"
    )


def words_of(found: SecretFound) -> str:
    """The warning of one secret found, in words."""
    return secret_message(found.where, found.found)


def warning_of(found: SecretFound, workspace: str) -> DidWarnParams:
    """The warning of one secret found, as the data a client is told."""
    return DidWarnParams(message=words_of(found), workspace=workspace, secret=found)


def secret_warnings(text: str, where: str) -> list[str]:
    """One message per kind of secret that ``text`` seems to hold (the secret not shown)."""
    return [secret_message(where, found) for found in secrets_in(text)]
