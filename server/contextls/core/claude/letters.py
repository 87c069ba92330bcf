"""Text -> classes of characters and case markers: the first half of ctok's normalisation.

Copied from ctok 1.3.0 (``normalize.py``, MIT, Sander Land; ``data/LICENSE.ctok``), kept close
to its source so that a new release diffs cleanly.
"""

from __future__ import annotations

import unicodedata
from functools import cache, lru_cache

import regex

from contextls.core.claude.tables import (
    CAPS_G,
    DIGIT,
    FUNNY_SPACE,
    HARD,
    PUNCT,
    PUNCT_SYMS,
    QUOTE_FOLD,
    SHIFT_G,
    SPACE,
    STRIP_CONTROL,
    STRIP_PRIVATE,
    SURROGATE,
    SYMBOL_LETTERS,
    VARIATION_SELECTORS,
    WORDY,
)

_STRAY_MARK = "stray_mark"

# Python 3.13 ships Unicode 15.1 data; the source models know these Unicode 16.0 case pairs.
_NEW_CASE_PAIRS = {"\u1c89": "\u1c8a", "\ua7cb": "\u0264"}
_NEW_CASED = frozenset(_NEW_CASE_PAIRS) | frozenset(_NEW_CASE_PAIRS.values())


# Uncased for the models, though Unicode calls `ϴ` a capital: bare it costs 4, where ⟨shift⟩ + `θ`
# costs 3. Not ẞ's blanket block below — `Θϴ` still takes its ⟨shift⟩ — so it drops out of the
# cased set instead.
_UNCASED = frozenset("\u03f4")
_ALPHABETIC = regex.compile(r"\p{Alphabetic}")
_MARK = regex.compile(r"\p{M}")


def _lower(text: str) -> str:
    return "".join(c if c in _UNCASED else _NEW_CASE_PAIRS.get(c, c.lower()) for c in text)


def _is_upper(c: str) -> bool:
    """A capital is one that lowers to something else. `ϓ`, `ϒ`, `ℂ` and `ℳ` are category Lu with
    no lowercase form, and measure as caseless."""
    if c in _UNCASED:
        return False
    return c in _NEW_CASE_PAIRS or (c.isupper() and _lower(c) != c)


def _is_lower(c: str) -> bool:
    return c in _NEW_CASE_PAIRS.values() or c.islower()


def _span_is_upper(text: str) -> bool:
    cased = [c for c in text if _is_upper(c) or _is_lower(c)]
    return bool(cased) and all(_is_upper(c) for c in cased)


def nfc(text: str, *, fold_quotes: bool = True) -> str:
    """Apply the measured text normalization. v3 alone folds curly quotes."""
    text = SURROGATE.sub("�", text)
    text = STRIP_CONTROL.sub("", unicodedata.normalize("NFC", text)).replace("\x00", " ")
    # Claude composes decomposed Thai SARA AM, whose compatibility decomposition NFC leaves alone.
    # Lao SARA AM and unrelated compatibility characters do not fold.
    text = text.replace("\u0e4d\u0e32", "\u0e33")
    text = STRIP_PRIVATE.sub("", text)
    if fold_quotes:
        text = text.translate(QUOTE_FOLD)
    return FUNNY_SPACE.sub(" ", text)


def is_hard_cp(o: int) -> bool:
    """Whether a codepoint uses the isolated character path for letters."""
    return (
        o >= 0x10000  # all astral (CJK ext, astral scripts, emoji)
        or 0x4E00 <= o <= 0x9FFF  # CJK Unified
        or 0x3400 <= o <= 0x4DBF  # CJK Ext A
        or 0xF900 <= o <= 0xFAFF  # CJK Compatibility
        or 0xAC00 <= o <= 0xD7A3  # Hangul syllables
        # The ideographic iteration and closing marks are letters by category (Lm, Lo) but continue
        # the Han run they follow; the wordy reading costs two tokens more than the oracle pays.
        # The katakana prolonged sound mark `ー` and small `ヶ` measured exact as wordy.
        or o in (0x3005, 0x3006, 0x3031, 0x3032, 0x3033, 0x3034, 0x3035, 0x303B, 0x303C)
        # 々 〆 and the kana repeat, iteration and masu marks
    )


@cache
def classify(c: str) -> str:
    """The stream class of one codepoint, derived from Unicode data and measured tables."""
    if c in _NEW_CASED:
        return WORDY
    o = ord(c)
    cat = unicodedata.category(c)
    if cat[0] == "Z" or c in "\t\n\r\f\v":
        return SPACE
    if any(lo <= o <= hi for lo, hi in SYMBOL_LETTERS):
        return WORDY
    if cat == "Nd" and (o < 0x80 or 0x0660 <= o <= 0x0669 or 0x06F0 <= o <= 0x06F9):
        return DIGIT
    if o < 0x80 and cat[0] in ("P", "S"):
        # ASCII punctuation and ASCII symbols both tile over the merged punct vocabulary, so
        # operators (`==`, `=>`, `});`) form one PUNCT run instead of exploding into HARD chars.
        return PUNCT
    if c in PUNCT_SYMS:
        return PUNCT
    if VARIATION_SELECTORS[0] <= o <= VARIATION_SELECTORS[1]:
        return HARD  # gc=Mn, but they take no word model at all
    if _MARK.fullmatch(c):
        # The source models take every astral codepoint through the isolated HARD path. The
        # Alphabetic result is exact for their BMP mark split only.
        return WORDY if o < 0x10000 and _ALPHABETIC.fullmatch(c) else HARD
    if cat[0] == "L" and not is_hard_cp(o):
        return WORDY
    return HARD


# Memoised (not in ctok): a word recurs throughout a file, and case marking is most of the
# time the stream takes.
@lru_cache(maxsize=1 << 16)
def mark_case(span: str, allcaps_min: int | None = 4, *, head_mark: bool = False) -> str:
    """Cased span → the marked form the tiler consumes.

    A case marker fires only on a whole span: a pure all-caps span of length >= ``allcaps_min``
    becomes ⟨caps⟩ + lowercase, a pure title-case span becomes ⟨shift⟩ + lowercase. Everything
    else stays literal, including internal or final capitals and short all-caps runs. Thus
    ``GaN``/``WiFi``/``QQ`` keep their bytes. ``allcaps_min=None`` disables ⟨caps⟩ (v4.7).

    Measured blocks, each leaving the span literal:

    * A caseless letter or mark anywhere in the span blocks ⟨caps⟩ (``str.isupper`` is vacuously
      True for ``ヲBUTTヲ`` or ``းUNDPA``, but the oracle spells them literally). ⟨shift⟩ is not
      blocked: a title-case head with a caseless tail keeps its marker.
    * A character with no lowered form blocks either marker (``'ℳ'.lower()`` is ``'ℳ'``, so a
      marker in front of an unchanged body over-counts). İ is the one exception: transparent to
      the title-case test and literal in the lowered body, blocking only at the span head; ẞ
      blocks everywhere.
    * ``head_mark`` means an unattached mark opened the word, so its head is
      that mark and neither marker can assert its lowered first letter.
    """
    if head_mark:
        return span
    if "ẞ" in span:
        return span
    if "İ" in span:
        tail = span[1:]
        if (
            _is_upper(span[:1])
            and span[:1] != "İ"
            and not any(_is_upper(c) for c in tail if c != "İ")
        ):
            return SHIFT_G + _lower(span[0]) + "".join(c if c == "İ" else _lower(c) for c in tail)
        return span
    unlowerable = any(
        (c in _NEW_CASED or unicodedata.category(c)[0] in ("L", "M"))
        and not _is_lower(c)
        and (not _is_upper(c) or _lower(c) == c)
        for c in span
    )
    if (
        allcaps_min is not None
        and _span_is_upper(span)
        and len(span) >= allcaps_min
        and not unlowerable
    ):
        # str.lower() applies Unicode's Final_Sigma rule; the oracle's ⟨caps⟩ body instead
        # lowers Σ to σ everywhere. An isupper() span contains no ς of its own, so the replace
        # only touches what lower() just produced.
        return CAPS_G + _lower(span).replace("ς", "σ")
    if _lower(span[:1]) == span[:1]:
        return span
    if _is_upper(span[:1]) and not any(_is_upper(c) for c in span[1:]):
        return SHIFT_G + _lower(span)
    return span


# ---- the marked stream --------------------------------------------------------------------------
