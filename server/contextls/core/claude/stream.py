"""Text -> the marked stream the tiler tiles, from ctok 1.3.0 (``normalize.py``, MIT).

Kept close to its source so that a new release diffs cleanly.
"""

from __future__ import annotations

from typing import Any

from contextls.core.claude.borders import (
    _contraction_seam,
    _digit_bow,
    _digit_eow,
    _digit_run,
    _hard_bow,
    _hard_eow,
    _opens_word,
    _runs,
)
from contextls.core.claude.letters import _STRAY_MARK, mark_case, nfc
from contextls.core.claude.tables import (
    BOW_G,
    CAPS_G,
    DIGIT,
    EOW_G,
    HARD,
    LITERAL_MARKER_ESCAPE_TABLE,
    PUNCT,
    SEAM_RE,
    SHIFT_G,
    SPACE,
    WORDY,
)


def stream(text: str, model: Any) -> str:
    """Text → the marked stream, in the internal glyph form ``pieces.json`` keys parse to.

    A WORDY run is bracketed by ⟨bow⟩ and ⟨eow⟩ and case-normalized. The ⟨eow⟩⟨bow⟩ seam
    encodes a single space between two such runs. Every other space stays literal.
    Punctuation-like, digit, separator, and stray-mark runs receive their measured boundary markers.
    """
    return stream_norm(
        nfc(text, fold_quotes=model.fold_quotes), model, raw_head_space=raw_head_space(text)
    )


def raw_head_space(text: str) -> bool:
    """Whether raw text supplies the leading space that the frame absorbs.

    Anything else standing between the frame and the text was read by the oracle before the space
    was, and the oracle does not absorb across it. Whether :func:`nfc` then strips that character
    or folds it into a space makes no difference to what the oracle saw. So a space a fold
    produced or exposed is not absorbed.
    """
    return text.startswith(" ")


def stream_norm(norm: str, model: Any, *, raw_head_space: bool = True) -> str:
    """The marked stream over already-normalized text.

    This is :func:`stream` over text the caller has already folded. It is split out so a document
    is NFC-folded once, and the caller can read the content-final newline run before ``rstrip``
    drops it. See ``engine.frame_tail``.
    """
    # Protect literal occurrences of the codepoints used as internal markers. PUA input was removed
    # by NFC, so the private-use escape values cannot collide with text.
    norm = norm.translate(LITERAL_MARKER_ESCAPE_TABLE)

    # `engine.tile` reads the content-final newline run before dropping it here and applies the
    # frame's newline ladder separately.
    norm = norm.rstrip("\n")
    # A single leading space is dropped: the frame ends in ⟨bow⟩ and that ⟨bow⟩ is the space
    # (' a' = 1). Two or more are a whitespace-run token and stay ('  a' = 2).
    # Where the frame does not end in a ⟨bow⟩ (v4.8+), there is no space to stand in for: the leading
    # space is a character like any other, and ' a' costs one more than 'a' rather than the same.
    # A space that normalization exposed or manufactured is not the raw head and is not absorbed
    # either. The oracle read `[stripped or folded char][space][text]` (see
    # :func:`raw_head_space`).
    if model.frame_bow and raw_head_space and norm[:1] == " " and norm[1:2] != " ":
        norm = norm[1:]
    runs = _runs(norm)
    if not runs:
        # Content that normalizes away entirely still pays for the frame's ⟨bow⟩. This is the same
        # ⟨bow⟩ the `out` list below writes when the first run supplies none; with nothing to
        # attach to it, it tiles as itself.
        return BOW_G if model.frame_bow else ""
    caps = model.allcaps_min
    n_runs = len(runs)

    def borders_space(i: int, side: int) -> bool:
        """Does this side of run ``i`` touch a space? Only a space counts. The marker represents an
        absorbed space, so nothing else can stand in for one.

        Message start counts (the frame ends in ⟨bow⟩, which is a space); message end does not (the
        trailing frame is not a space). A whitespace run is not homogeneous, so what matters is the
        character adjacent to this side: the neighbour's last char looking left, its first looking
        right.
        """
        j = i + side
        if j < 0:
            return bool(model.frame_bow)
        if j >= n_runs:
            return False
        if runs[j][0] != SPACE:
            return False
        if side < 0:
            return runs[j][1][-1:] == " "
        # Run-kills-marker: a right-hand marker is written for the seam space only, never before
        # a run of two or more spaces.
        return runs[j][1][:1] == " " and runs[j][1][:2] != "  "

    # The frame ends in ⟨bow⟩, always. A wordy or punct first run writes its own, as does a leading
    # non-ASCII digit run (it borders a space at the message edge); a leading whitespace run absorbs
    # it only if it starts with a real space, since a TAB or NEWLINE cannot. Anything else supplies
    # none, so the frame's ⟨bow⟩ is written here and tiles as itself.
    # A word-opening `'` supplies no ⟨bow⟩ either (see `_opens_word`), and what the frame hands it
    # is a space, so at message start that space is written as the character it is.
    first = runs[0]
    head_quote = _opens_word(runs, 0)
    has_own_bow = not head_quote and (
        first[0] in (WORDY, PUNCT, _STRAY_MARK)
        or _hard_bow(first[1])
        or (first[0] in (DIGIT, HARD) and _digit_bow(first[1]))
        or (first[0] == SPACE and first[1][:1] == " ")
    )
    # Nothing to hand out where the frame ends in no ⟨bow⟩: a digit or an ideograph opening the
    # message pays for no marker, which is exactly where v4.8+ counts one token under v4.7.
    out = [] if has_own_bow or not model.frame_bow else [" " if head_quote else BOW_G]
    for i, (cls, body) in enumerate(runs):
        if cls == WORDY:
            # A wordy span is flanked on both sides, except where a contraction apostrophe is
            # already its opening boundary (`_contraction_seam`) or an unattached mark run already
            # opened this word (the `_STRAY_MARK` branch below); in that second case the span's
            # head is the mark, so the case markers go with it (`mark_case(head_mark=...)`).
            fused = bool(i) and runs[i - 1][0] == _STRAY_MARK
            n = mark_case(body, caps, head_mark=fused)
            pre = ""
            while n[:1] in (SHIFT_G, CAPS_G):  # case markers precede ⟨bow⟩ in the file's spelling
                pre, n = pre + n[0], n[1:]
            bow = "" if (fused or _contraction_seam(runs, i)) else BOW_G
            out.append(pre + bow + n + EOW_G)
        elif cls == _STRAY_MARK:
            # A stray-mark pretoken is a word: ⟨bow⟩ on the left even when it is adjacent to a
            # symbol, digit or punctuation run, and ⟨eow⟩ on the right against everything except
            # a letter, which is the rest of the same word. The mark run writes no ⟨eow⟩ and the
            # letter writes no ⟨bow⟩ of its own: `⟨bow⟩M abc⟨eow⟩`, one word, exactly as
            # `_syriac_vowel` and U+0CF3 fuse. Measured over 22 marks on frames that cancel the
            # mark's own price: only the fused spelling's error is constant across right-hand
            # words. The run head does not byte-price because the mark reaches its own unit piece.
            letter_follows = i + 1 < n_runs and runs[i + 1][0] == WORDY
            out.append(BOW_G + body + ("" if letter_follows else EOW_G))
        elif cls == PUNCT or _hard_bow(body) or _hard_eow(body):
            # A punct span is marked only on the side that borders whitespace: `a! b` gets `!⟨eow⟩`,
            # `a!b` gets a bare `!`. The marker is written unconditionally; the vocabulary decides
            # whether a piece swallows it.
            takes_bow = (
                borders_space(i, -1)
                and not _opens_word(runs, i)
                and (cls == PUNCT or _hard_bow(body))
            )
            out.append(
                (BOW_G if takes_bow else "")
                + body
                + (EOW_G if borders_space(i, +1) and (cls == PUNCT or _hard_eow(body)) else "")
            )
        elif _digit_run(body) and cls in (DIGIT, HARD):
            # A digit run takes the same border markers punctuation does, on both sides, decided
            # by the border character (`_digit_bow`, `_digit_eow`). Deliberately no lookback
            # across the space: a space run kills a border marker but not a seamless ⟨bow⟩, which
            # separates the two readings, and the lookback reads one over.
            out.append(
                (BOW_G if _digit_bow(body) and borders_space(i, -1) else "")
                + body
                + (EOW_G if _digit_eow(body) and borders_space(i, +1) else "")
            )
        else:
            out.append(body)  # HARD letter scripts and whitespace: no markers
    return SEAM_RE.sub(r"\1" + EOW_G + r"\2" + BOW_G, "".join(out))
