"""The environment, read in one place with one rule for a yes-or-no variable.

Every contextls variable that turns something on or off reads the same words: ``1``,
``true``, ``yes``, ``on`` say yes; ``0``, ``false``, ``no``, ``off`` and the empty string
say no (so ``CONTEXTLS_NO_DAEMON=false`` means what it says). Standard library only: the
command line's quick path imports it.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

YES: Final = frozenset({"1", "true", "yes", "on"})
NO: Final = frozenset({"", "0", "false", "no", "off"})


def flag(name: str, default: bool = False) -> bool:
    """Whether the variable ``name`` says yes; ``default`` when unset or unreadable."""
    value = os.environ.get(name)
    if value is None:
        return default
    word = value.strip().lower()
    if word in YES:
        return True
    if word in NO:
        return False
    return default


def text(name: str) -> str | None:
    """The variable ``name``, or None when unset or empty."""
    value = os.environ.get(name, "")
    return value or None
