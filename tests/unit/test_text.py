"""Cutting an LSP range out of a document (contextls.core.text)."""

from __future__ import annotations

import pytest

from contextls.core.errors import ContextError, InvalidParams
from contextls.core.text import lines_with_ends, slice_range, utf16_to_index
from contextls.protocol import ErrorCode

DOC = "first line\nsecond line\nthird line\nfourth line\n"


def test_whole_lines_give_their_content_and_one_based_lines() -> None:
    piece = slice_range(DOC, (1, 0), (2, 10))
    assert piece.content == "second line\nthird line"
    assert (piece.start_line, piece.end_line) == (2, 3)


def test_part_of_one_line() -> None:
    piece = slice_range(DOC, (0, 6), (0, 10))
    assert piece.content == "line"
    assert (piece.start_line, piece.end_line) == (1, 1)


def test_range_from_the_middle_of_one_line_to_the_middle_of_another() -> None:
    piece = slice_range(DOC, (0, 6), (1, 6))
    assert piece.content == "line\nsecond"
    assert (piece.start_line, piece.end_line) == (1, 2)


def test_end_at_column_zero_does_not_include_that_line() -> None:
    piece = slice_range(DOC, (1, 0), (3, 0))
    assert piece.content == "second line\nthird line\n"
    assert (piece.start_line, piece.end_line) == (2, 3)


def test_end_at_column_zero_of_the_next_line_is_one_line() -> None:
    piece = slice_range(DOC, (2, 0), (3, 0))
    assert piece.content == "third line\n"
    assert (piece.start_line, piece.end_line) == (3, 3)


def test_end_past_the_last_line_is_clamped() -> None:
    piece = slice_range(DOC, (2, 0), (99, 5))
    assert piece.content == "third line\nfourth line"
    assert (piece.start_line, piece.end_line) == (3, 4)


def test_end_character_past_the_line_is_clamped_to_the_line() -> None:
    piece = slice_range(DOC, (0, 0), (0, 500))
    assert piece.content == "first line"
    assert (piece.start_line, piece.end_line) == (1, 1)


def test_document_without_a_final_newline() -> None:
    piece = slice_range("a = 1\nb = 2", (1, 0), (5, 0))
    assert piece.content == "b = 2"
    assert (piece.start_line, piece.end_line) == (2, 2)


def test_start_past_the_end_of_the_document_is_an_invalid_range() -> None:
    with pytest.raises(ContextError) as caught:
        slice_range(DOC, (4, 0), (6, 0), label="src/app.py")
    assert caught.value.code == ErrorCode.INVALID_RANGE
    assert "src/app.py" in caught.value.message and "4 lines" in caught.value.message


def test_empty_document_is_an_invalid_range() -> None:
    with pytest.raises(ContextError) as caught:
        slice_range("", (0, 0), (0, 0))
    assert caught.value.code == ErrorCode.INVALID_RANGE


def test_end_before_start_is_invalid_params_at_the_range() -> None:
    with pytest.raises(InvalidParams) as caught:
        slice_range(DOC, (2, 3), (1, 8))
    assert caught.value.path == "$.range"
    assert caught.value.code == ErrorCode.INVALID_PARAMS


def test_end_before_start_on_the_same_line_is_invalid_params() -> None:
    with pytest.raises(InvalidParams) as caught:
        slice_range(DOC, (1, 5), (1, 2))
    assert caught.value.path == "$.range"


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("a\n   \n\t\nb\n", (1, 0), (3, 0)),  # blank lines only
        ("abc\n", (0, 1), (0, 1)),  # empty range
        ("x  y\n", (0, 1), (0, 3)),  # spaces between words
    ],
)
def test_whitespace_only_range_is_refused(
    text: str, start: tuple[int, int], end: tuple[int, int]
) -> None:
    with pytest.raises(InvalidParams) as caught:
        slice_range(text, start, end)
    assert caught.value.path == "$.range"


def test_crlf_line_endings_count_as_one_break() -> None:
    text = "one\r\ntwo\r\nthree\r\n"
    piece = slice_range(text, (1, 0), (2, 5))
    assert piece.content == "two\r\nthree"
    assert (piece.start_line, piece.end_line) == (2, 3)


def test_crlf_end_character_past_the_line_excludes_the_line_break() -> None:
    piece = slice_range("one\r\ntwo\r\n", (0, 0), (0, 99))
    assert piece.content == "one"


def test_crlf_end_at_column_zero() -> None:
    piece = slice_range("one\r\ntwo\r\nthree\r\n", (0, 0), (2, 0))
    assert piece.content == "one\r\ntwo\r\n"
    assert (piece.start_line, piece.end_line) == (1, 2)


def test_lone_cr_line_endings() -> None:
    text = "one\rtwo\rthree"
    piece = slice_range(text, (1, 0), (2, 3))
    assert piece.content == "two\rthr"
    assert (piece.start_line, piece.end_line) == (2, 3)


def test_mixed_line_endings_split_like_lsp() -> None:
    assert lines_with_ends("a\nb\r\nc\rd") == ["a\n", "b\r\n", "c\r", "d"]


def test_utf16_offsets_after_an_astral_character() -> None:
    # "😀" is one Python character but two UTF-16 code units.
    line = "x = '😀' + y"
    piece = slice_range(line + "\n", (0, 11), (0, 12))
    assert piece.content == "y"


def test_utf16_range_covering_emoji_on_several_lines() -> None:
    text = "# 🐍 snake\nname = '𝒳'\nok = True\n"
    # Line 1 (0-based 0): "# " is 2 units, the snake 2 units -> "snake" starts at 5.
    # Line 2: "name = '" is 8 units, 𝒳 is 2 units -> the quote after it is at 10.
    piece = slice_range(text, (0, 5), (1, 10))
    assert piece.content == "snake\nname = '𝒳"
    assert (piece.start_line, piece.end_line) == (1, 2)


def test_bmp_non_ascii_characters_are_one_unit() -> None:
    piece = slice_range("café = 1\n", (0, 0), (0, 4))
    assert piece.content == "café"


@pytest.mark.parametrize(
    ("line", "character", "index"),
    [
        ("abc", 0, 0),
        ("abc", 2, 2),
        ("abc", 10, 3),
        ("😀b", 2, 1),
        ("😀b", 3, 2),
        ("a😀😀b", 5, 3),
        ("a😀😀b", 50, 4),
    ],
)
def test_utf16_to_index(line: str, character: int, index: int) -> None:
    assert utf16_to_index(line, character) == index


def test_clamped_end_on_a_line_with_emoji_takes_the_whole_line() -> None:
    piece = slice_range("a\n😀 end", (1, 0), (9, 0))
    assert piece.content == "😀 end"
    assert (piece.start_line, piece.end_line) == (2, 2)
