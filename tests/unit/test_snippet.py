"""Search snippets: plain text around the first match, and where the matches are."""

from __future__ import annotations

from contextls.core.snippets import Snippet, snippet, telling_words


def marked(found: Snippet | None) -> str:
    """The snippet with its highlights in brackets, to read the spans at a glance."""
    assert found is not None
    text, out, at = found.text, [], 0
    for start, end in found.highlights:
        out += [text[at:start], "[", text[start:end], "]"]
        at = end
    return "".join([*out, text[at:]])


def test_matches_are_spans_whatever_their_case() -> None:
    found = snippet("The quick brown fox jumps over the lazy dog; the Fox sleeps", ["fox"])
    assert found is not None
    assert "*" not in found.text
    assert marked(found) == "The quick brown [fox] jumps over the lazy dog; the [Fox] sleeps"


def test_a_long_text_is_cut_around_the_first_match() -> None:
    text = " ".join(f"w{i}" for i in range(100)) + " target here"
    assert marked(snippet(text, ["target"])) == "…w92 w93 w94 w95 w96 w97 w98 w99 [target] here"
    middle = snippet(" ".join(f"w{i}" for i in range(100)), ["w50"], width=6)
    assert marked(middle) == "…w48 w49 [w50] w51 w52 w53…"


def test_whole_words_only_and_no_match_gives_nothing() -> None:
    assert snippet("foxes and firefox", ["fox"]) is None
    assert snippet("anything", []) is None


def test_whitespace_is_folded_and_regex_characters_are_literal() -> None:
    assert marked(snippet("a\n  b   FOX\n\tc", ["fox"])) == "a b [FOX] c"
    assert marked(snippet("call a.b(c) now", ["c"])) == "call a.b([c]) now"


def test_offsets_count_code_points_not_bytes() -> None:
    found = snippet("naïve café ☕ unicode here", ["unicode"])
    assert found is not None
    ((start, end),) = found.highlights
    assert found.text[start:end] == "unicode"


def test_stop_words_are_never_highlighted() -> None:
    assert telling_words("where is the token budget?") == ["token", "budget"]
    assert marked(snippet("the budget of the window", ["the", "budget"])) == (
        "the [budget] of the window"
    )
    assert snippet("the window", ["the"]) is None


def test_a_word_of_a_camel_case_name_is_shown_where_it_is() -> None:
    text = "export function isWednesday(date) {\n  return previousWednesday(date);\n}\n"
    found = snippet(text, ["wednesday", "previous"])
    assert found is not None
    assert [found.text[a:b] for a, b in found.highlights] == ["Wednesday", "previous", "Wednesday"]
    assert snippet("the weekday", ["day"]) is None  # inside a word, not a name's word


def _whole_text_snippet(text: str, words: list[str], width: int) -> Snippet | None:
    """The snippet read from every word of the text, as it was first made: what the
    snippet that reads only near its match must equal."""
    import re

    from contextls.core.snippets import ELLIPSIS, STOP_WORDS, _words_pattern

    kept = tuple(word for word in words if word.lower() not in STOP_WORDS)
    pattern = _words_pattern(kept)
    first = pattern.search(text) if pattern is not None else None
    if pattern is None or first is None:
        return None
    tokens = list(re.finditer(r"\w+", text))
    at = next(i for i, token in enumerate(tokens) if token.end() > first.start())
    lo = max(0, at - width // 3)
    hi = min(len(tokens), lo + width)
    piece = " ".join(text[tokens[lo].start() : tokens[hi - 1].end()].split())
    before = ELLIPSIS if lo > 0 else ""
    shown = before + piece + (ELLIPSIS if hi < len(tokens) else "")
    spans = [(len(before) + m.start(), len(before) + m.end()) for m in pattern.finditer(piece)]
    return Snippet(shown, spans)


def test_a_snippet_reads_only_near_its_match_and_says_the_same() -> None:
    import random

    rng = random.Random(7)
    vocabulary = [
        *("parse", "header", "isHeader", "parseHeader", "x_1", "Ünïcode", "naïve", "42"),
        *("the", "charset", "décode", "a", "Parse", "HEADER", "ab_cd", "w" * 900),
    ]
    gaps = [" ", "  ", "\n", ", ", ".", "(", ") ", "\t", " — ", "__", "...", " " * 700]
    for _ in range(3_000):
        length = rng.choice([0, 1, 3, 10, 40, 200, 2_000])
        text = "".join(rng.choice(vocabulary) + rng.choice(gaps) for _ in range(length))
        text = rng.choice(["", " ", "--"]) + text
        if rng.random() < 0.5:  # ASCII texts take a quicker way to their first match
            text = text.encode("ascii", "ignore").decode()
        words = rng.sample(["parse", "header", "charset", "ünïcode", "42", "the", "x_1"], 2)
        width = rng.choice([1, 2, 3, 6, 24, 60])
        assert snippet(text, words, width) == _whole_text_snippet(text, words, width), (
            text[:200],
            words,
            width,
        )
