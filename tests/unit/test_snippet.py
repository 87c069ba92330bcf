"""The archive search's snippets: the words around the first match, matches in bold."""

from __future__ import annotations

from contextls.store import snippet


def test_matches_are_bold_whatever_their_case() -> None:
    text = "The quick brown fox jumps over the lazy dog; the Fox sleeps"
    assert snippet(text, ["fox"]) == (
        "The quick brown **fox** jumps over the lazy dog; the **Fox** sleeps"
    )


def test_a_long_text_is_cut_around_the_first_match() -> None:
    text = " ".join(f"w{i}" for i in range(100)) + " target here"
    assert snippet(text, ["target"]) == "…w92 w93 w94 w95 w96 w97 w98 w99 **target** here"
    middle = snippet(" ".join(f"w{i}" for i in range(100)), ["w50"], width=6)
    assert middle == "…w48 w49 **w50** w51 w52 w53…"


def test_whole_words_only_and_no_match_gives_nothing() -> None:
    assert snippet("foxes and firefox", ["fox"]) == ""
    assert snippet("anything", []) == ""


def test_whitespace_is_folded_and_regex_characters_are_literal() -> None:
    assert snippet("a\n  b   FOX\n\tc", ["fox"]) == "a b **FOX** c"
    assert snippet("call a.b(c) now", ["c"]) == "call a.b(**c**) now"
