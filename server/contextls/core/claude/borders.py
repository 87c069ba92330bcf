"""Runs of one class and the boundary markers they write, from ctok 1.3.0 (``normalize.py``, MIT).

Kept close to its source so that a new release diffs cleanly.
"""

from __future__ import annotations

import unicodedata
from functools import cache

from contextls.core.claude.letters import _ALPHABETIC, _MARK, _STRAY_MARK, classify
from contextls.core.claude.tables import (
    CONTRACTION_SUFFIXES,
    DIGIT,
    ESCAPED_MARKER_LITERALS,
    HARD,
    IDEOGRAPHIC_SYMBOLS,
    PUNCT,
    VARIATION_SELECTORS,
    WORDY,
)


def _is_selector(ch: str) -> bool:
    return VARIATION_SELECTORS[0] <= ord(ch) <= VARIATION_SELECTORS[1]


def _hard_bow(body: str) -> bool:
    """Whether the first character of a hard run takes a left border marker."""
    return bool(body) and (_is_selector(body[0]) or _marks_like_punct(body[0]))


def _hard_eow(body: str) -> bool:
    """Whether the last character of a hard run takes a right border marker."""
    return bool(body) and (_is_selector(body[-1]) or _marks_like_punct(body[-1]))


def _opens_word(runs: list[tuple[str, str]], i: int) -> bool:
    """Whether run ``i`` is a lone ``'`` that opens the word after it.

    Examples are ``a 'b``, ``'First``, and ``x 'REXX``.

    The boundary before such an apostrophe is not absorbed into it (measured on the letter sweep,
    the message-start ladder, and the head-seam probe). Only a punct run that is exactly ``'``
    qualifies: in ``('`` or ``'''`` the boundary lands on a different character.
    """
    return runs[i][1] == "'" and i + 1 < len(runs) and runs[i + 1][0] in (WORDY, _STRAY_MARK)


def _takes_right_border(cls: str, body: str) -> bool:
    """Does this run write a boundary marker of its own on its right edge?

    Three populations do: punctuation/symbols/format characters, a terminal separator run, and a
    digit run whose last character is a border digit. These are the runs the pretokenizer's catch-all
    alternative owns. An unattached mark run is not one of them: it writes an ⟨eow⟩, but as a word
    (the ``_STRAY_MARK`` branch of :func:`stream_norm`), and a word lets the contraction seam
    through.
    """
    return (
        cls == PUNCT
        or _hard_eow(body)
        or (cls in (DIGIT, HARD) and _digit_run(body) and _digit_eow(body))
    )


def _contraction_seam(runs: list[tuple[str, str]], i: int) -> bool:
    """Does a lone apostrophe immediately left of wordy run ``i`` supply that word's ⟨bow⟩?

    `it's` is one word boundary, not two: the apostrophe is the boundary, exactly as the seam
    space is, so the word after it is written bare. The vocabulary then decides whether a piece
    swallows the pair (`'s⟨eow⟩` does; `'ll⟨eow⟩` does not).

    Three conditions, all measured: the suffix is in ``CONTRACTION_SUFFIXES``, whole-word and
    lowercase; the apostrophe is a punct run of its own (one that follows other punctuation
    belongs to that run and reaches the word with nothing); and the run on the far side of the
    apostrophe writes no right-hand border marker of its own (:func:`_takes_right_border`).
    A letter, an ASCII digit, an ideograph, a space run or the message edge on the left all let
    it through.
    """
    if runs[i][1] not in CONTRACTION_SUFFIXES or i == 0:
        return False
    prev_cls, prev_body = runs[i - 1]
    # A punct run is maximal, so a run that is the apostrophe cannot have punctuation to its left.
    if prev_cls != PUNCT or prev_body != "'":
        return False
    return i < 2 or not _takes_right_border(*runs[i - 2])


def _digit_border(ch: str) -> bool:
    """Whether a digit receives a border marker.

    The split is ASCII vs not, uniform across scripts: ASCII digits take no border marker of
    their own, everything else does. Astral digits take none either.
    """
    cat = unicodedata.category(ch)
    return (cat == "No" or (cat == "Nd" and not ch.isascii())) and ord(ch) < 0x10000


def _digit_run(body: str) -> bool:
    """A uniform run of decimal digits (Nd) or other numbers (No).

    No covers fractions, super/subscripts, circled digits, and script-specific numeral signs.
    These classify HARD but take border markers below U+10000.
    """
    if not body:
        return False
    category = unicodedata.category(body[0])
    return category in ("Nd", "No") and all(unicodedata.category(ch) == category for ch in body[1:])


def _digit_bow(body: str) -> bool:
    """Does a digit run write ⟨bow⟩ where it borders a space on the left? The run's first
    character decides, not the run as a whole (measured on mixed ASCII/Arabic-Indic runs, the
    only runs where the two readings differ).
    """
    return _digit_run(body) and _digit_border(body[0])


def _digit_eow(body: str) -> bool:
    """Does a digit run write ⟨eow⟩ where it borders a single space on the right? The run's last
    character decides, the mirror of :func:`_digit_bow`.

    The seam hides this marker almost everywhere; it shows only before a run that writes no ⟨bow⟩
    of its own, such as a CJK or Hangul letter or ideographic punctuation. There it costs one token.
    """
    return _digit_run(body) and _digit_border(body[-1])


def is_separator(c: str) -> bool:
    """Whether ``c`` is a non-Alphabetic mark that closes a word run.

    Claude's split is Unicode's derived ``Alphabetic`` property, not a hand-written orthographic
    rule: an Alphabetic mark stays with the word; every other BMP mark is a separator. Variation
    selectors are the separate exception, riding their base without taking word boundaries.
    """
    return (
        ord(c) < 0x10000
        and _MARK.fullmatch(c)
        and not _is_selector(c)
        and not _ALPHABETIC.fullmatch(c)
    )


def _stray_mark(c: str) -> bool:
    r"""A combining mark, asked at a position where nothing before it can be its base.

    An Alphabetic BMP mark with no preceding base opens a word-like run after a symbol, digit,
    punctuation, ideograph, emoji, or at text start. A non-Alphabetic mark is already a separator
    and belongs to the catch-all branch.

    Only a BMP mark reaches this branch. Astral marks are HARD and non-Alphabetic BMP marks are
    separators.
    """
    if _syriac_vowel(c):
        return False  # a baseless Syriac vowel is a word-forming letter instead
    return unicodedata.combining(c) != 0 and not is_separator(c)


def _syriac_vowel(c: str) -> bool:
    """A Syriac vowel point or superscript alaph that acts as a word-forming letter
    wherever no base can hold it, rather than as a stray mark or a separator-run rider: it takes
    the full word model riding a separator or standing baseless, and fuses into a following letter's
    word. A based vowel stays an ordinary in-word mark.
    """
    o = ord(c)
    return o == 0x0711 or 0x0730 <= o <= 0x073F


def _runs(norm: str) -> list[tuple[str, str]]:
    """Split text into maximal same-class runs.

    A non-Alphabetic mark stands outside a word: ``C mark X`` becomes
    ``⟨bow⟩C⟨eow⟩ mark ⟨bow⟩X⟨eow⟩``. It is a HARD, punctuation-kind run, so spaces beside it
    follow the normal border and seam rules.
    """
    if not norm:
        return []
    out, cur, cur_cls = [], norm[0], classify(norm[0])
    if cur_cls == WORDY and _stray_mark(norm[0]):
        cur_cls = _STRAY_MARK  # nothing in front of it, so no letter can be its base
    for ch in norm[1:]:
        c = classify(ch)
        # A combining mark riding a separator run opens a stray word like any other: an accent
        # after a Syriac dot is a separator in its own right and joins the run, and every other
        # rider measured one token under if made to ride.
        if cur_cls == _STRAY_MARK and c == WORDY and _stray_mark(ch):
            cur += ch  # consecutive unattached marks are one regex-style run
        elif c == cur_cls:
            cur += ch
        elif c == WORDY and _stray_mark(ch) and cur_cls != WORDY:
            out.append((cur_cls, cur))
            cur, cur_cls = ch, _STRAY_MARK
        else:
            out.append((cur_cls, cur))
            cur, cur_cls = ch, c
    out.append((cur_cls, cur))

    # A HARD run is not homogeneous, so it is split where the character kind changes and the
    # predicates below then apply per sub-run (`文？` is one run by class, but `？` takes the same
    # border markers as in a run of its own). A variation selector never opens a sub-run: it rides
    # its base's sub-run, or a symbol like `⚖️` would sever at the selector and lose its ⟨eow⟩.
    split = []
    for cls, body in out:
        if cls != HARD or len(body) == 1:
            split.append((cls, body))
            continue
        cur = body[0]
        cur_kind = _hard_kind(cur)
        for ch in body[1:]:
            if _is_selector(ch) or _hard_kind(ch) == cur_kind:
                cur += ch
            else:
                split.append((cls, cur))
                cur = ch
                cur_kind = _hard_kind(ch)
        split.append((cls, cur))
    return split


def _hard_kind(ch: str) -> str:
    """Which pretoken alternative a character of a HARD run belongs to.

    A HARD run is a run of our own class, not a pretoken: the conventional pretokenizer regex
    alternates letters | numbers | catch-all, so a number and the ideograph beside it are
    different pretokens however our classifier grouped them, and each sub-run takes its own
    border markers. U+3007 is Nl, outside the measured Nd/No border population, and stays with
    its ideographs.
    """
    if _marks_like_punct(ch):
        return "punct"
    if _digit_border(ch):
        return "number"
    return "letter"


@cache  # per character (not in ctok): asked for every character of a hard run
def _marks_like_punct(ch: str) -> bool:
    """Whether the border-marker branch can claim this character.

    It accepts punctuation, symbols, format characters, and separator marks.

    Ideographic punctuation is excluded, so it stays in the ideograph run it sits in and takes no
    markers. That is per border character rather than per run: `1。？ 1` and `1 ？。1` are exact
    because the marker sits on the `？` side, while `1？。 1` and `1 。？1` are one over if the run
    is judged as a whole.

    The category test misses the block's own symbols, which read the same way; `IDEOGRAPHIC_SYMBOLS`
    carries them.

    Astral characters are excluded too: an emoji takes no border marker, so it must not be the
    punct kind either. A format character in front of one would otherwise be glued into a single
    markerless sub-run and lose the ⟨bow⟩ it is entitled to.
    """
    ch = ESCAPED_MARKER_LITERALS.get(ch, ch)
    if ord(ch) >= 0x10000:
        return False
    if is_separator(ch):
        return True
    cat = unicodedata.category(ch)
    ideographic_punct = 0x3001 <= ord(ch) <= 0x303F and (
        cat.startswith("P") or ch in IDEOGRAPHIC_SYMBOLS
    )
    return (cat[0] in ("P", "S") or cat in ("Cf", "Cn")) and not ideographic_punct
