"""One rule for every yes-or-no variable: ``CONTEXTLS_NO_DAEMON=false`` means no."""

from __future__ import annotations

import pytest

from contextls.common.environment import flag
from contextls.semantic.availability import DISABLE_ENV, why_not


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("1", True),
        ("true", True),
        ("Yes", True),
        (" on ", True),
        ("0", False),
        ("false", False),
        ("no", False),
        ("OFF", False),
        ("", False),
        ("maybe", None),
    ],
)
def test_a_flag_reads_the_same_words_everywhere(
    monkeypatch: pytest.MonkeyPatch, value: str, said: bool | None
) -> None:
    monkeypatch.setenv("CONTEXTLS_SOME_FLAG", value)
    for default in (False, True):
        assert flag("CONTEXTLS_SOME_FLAG", default) == (default if said is None else said)


@pytest.mark.parametrize("value", ["0", "false", "off", "no"])
def test_search_by_meaning_is_turned_off_by_any_no(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(DISABLE_ENV, value)
    assert f"turned off by {DISABLE_ENV}={value}" in why_not("/tmp/x.sqlite3")
