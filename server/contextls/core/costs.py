"""What an item costs in a window: its markdown section, as a render gives it to a model.

A window counts what is rendered, not the text alone: an item's heading (its kind,
source, lines, id, pin, staleness) and its fences take tokens too (50 short notes
counted 800 tokens and rendered 1,453). The render cuts its text into pieces where the
pre-tokenizer splits anyway (``core.render``), so the heading and the body can be
counted apart and added up: a pin, a stale mark or a move counts the heading again (a
few words), never the text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from contextls.core.items import Item
from contextls.core.render import MARKDOWN_FRAME, body_piece, fence_for, heading_piece

OFF_LOOP_CHARS: Final = 64 * 1024
"""From this much text on, the server reads, parses, outlines, draws and counts in a worker
thread, not on the loop that answers everyone (tiktoken and tree-sitter's parse let go of
the GIL; Claude's tokenizer counts ~1 MB/s, a large text in a process of its own): an
outline of a 900 KB file takes ~1 s, a render of 400 files (7 MB) held every client ~1 s,
showing 390 of them as outlines ~1.2 s. Less is done in the turn that asked, as fast as
a thread's round trip."""


class Costs:
    """Counts items as rendered, with one encoding's tokenizer."""

    def __init__(self, count_tokens: Callable[[str], int], encoding: str) -> None:
        self.count = count_tokens
        self.encoding = encoding
        self._frame = -1
        self._seams: dict[str, int] = {}

    @property
    def frame(self) -> int:
        """What a render of a window takes besides its items (counted on first use: the
        tokenizer loads then)."""
        if self._frame < 0:
            self._frame = self.count(MARKDOWN_FRAME)
        return self._frame

    def seam(self, fence: str = "") -> int:
        """What joining two pieces costs beyond their counts: before a heading (after the
        blank line that ends the piece before it), or before a text's opening ``fence``.
        0 for tiktoken's encodings, whose pre-tokenizer splits there anyway; Claude's rules
        count a newline before a line's first characters with them. Measured once each."""
        if fence not in self._seams:
            heading = "### Text · ctx-1\n"
            if fence:
                body = f"{fence}text\n{fence}\n\n"
                joined = self.count(heading + body) - self.count(heading) - self.count(body)
            else:
                joined = self.count(MARKDOWN_FRAME + heading) - self.frame - self.count(heading)
            # Never below 0: an estimate rounds each piece up, so its pieces add up to more
            # than the whole already, and a window that counts a token too many is safe.
            self._seams[fence] = max(joined, 0)
        return self._seams[fence]

    def of(self, item: Item) -> int:
        """What ``item`` takes in the window: its markdown section, heading and text."""
        return self.heading(item) + self.body(item)

    def heading(self, item: Item) -> int:
        """The heading's tokens, with the seams before it and before the item's text."""
        return self.count(heading_piece(item)) + self.seam() + self.seam(fence_for(item.content))

    def body(self, item: Item) -> int:
        """What the item's text takes with its fences; counted once per text."""
        if item.body_tokens < 0:
            item.body_tokens = self.count(body_piece(item))
        return item.body_tokens

    def counted_body(self, item: Item) -> tuple[str, int]:
        """An item not counted yet: its text with its fences, and what that takes (a
        change made later looks the count up: ``Tokenizer.consulting``)."""
        piece = body_piece(item)
        item.body_tokens = self.count(piece)
        return piece, item.body_tokens

    def adopt(self, item: Item) -> None:
        """An item read back from the store, counted in this encoding: it knows its whole
        cost, so what its text takes is that less its heading (its text is not counted)."""
        item.body_tokens = item.tokens - self.heading(item)
