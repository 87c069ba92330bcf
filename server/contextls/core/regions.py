"""Regions of one file in a window: which overlap or touch, and one region made of many."""

from __future__ import annotations

from typing import Any

from contextls.core.candidates import Candidate
from contextls.core.items import END_COLUMN, START_COLUMN, Item, lines_of, split_lines


def touching_closure(lines: tuple[int, int], regions: list[Item]) -> list[Item]:
    """Regions that overlap or touch ``lines``, directly or through each other."""
    start, end = lines
    absorbed: list[Item] = []
    pending = list(regions)
    grew = True
    while grew:
        grew = False
        for item in list(pending):
            span = item.lines
            assert span is not None
            if span[0] <= end + 1 and start <= span[1] + 1:
                start, end = min(start, span[0]), max(end, span[1])
                absorbed.append(item)
                pending.remove(item)
                grew = True
    return absorbed


def merge_regions(absorbed: list[Item], candidate: Candidate) -> tuple[str, dict[str, Any]] | None:
    """One region covering all of them: the file's text over the merged lines when the
    candidate carries it, else the pieces' lines (the newest text wins where they overlap)."""
    newline_at_end = candidate.content.endswith("\n")
    span = lines_of(candidate.metadata)
    if candidate.metadata.get("view") == "outline" and span is not None:
        # A class shown as its outline absorbs what lies inside it and stays an outline: the
        # file's text over its lines would be the whole class under the outline's name.
        inside = all(i.lines and span[0] <= i.lines[0] and i.lines[1] <= span[1] for i in absorbed)
        if inside:
            return candidate.content, merged_metadata(candidate, *span)
    if candidate.source is not None:
        return merge_from_source(absorbed, candidate, candidate.source)
    by_line: dict[int, str] = {}
    sources = [
        *((item.content, item.lines) for item in sorted(absorbed, key=lambda i: i.seq)),
        (candidate.content, lines_of(candidate.metadata)),
    ]
    for content, span in sources:
        assert span is not None
        lines = split_lines(content)
        if len(lines) != span[1] - span[0] + 1:
            return None
        by_line.update(zip(range(span[0], span[1] + 1), lines, strict=True))
    start, end = min(by_line), max(by_line)
    text = "\n".join(by_line[n] for n in range(start, end + 1))
    return (text + "\n" if newline_at_end else text), merged_metadata(candidate, start, end)


def merge_from_source(
    absorbed: list[Item], candidate: Candidate, source: str
) -> tuple[str, dict[str, Any]] | None:
    pieces = [(item.content, item.lines) for item in absorbed]
    pieces.append((candidate.content, lines_of(candidate.metadata)))
    spans = [span for _, span in pieces if span is not None]
    start, end = min(span[0] for span in spans), max(span[1] for span in spans)
    lines = source.splitlines(keepends=True)
    if end > len(lines):
        return None  # the file no longer has these lines: keep the regions apart
    text = "".join(lines[start - 1 : end])
    # It ends as the piece that reaches the last line did: with its newline, or without.
    if not any(content.endswith("\n") for content, span in pieces if span and span[1] == end):
        text = text.removesuffix("\n").removesuffix("\r")
    return text, merged_metadata(candidate, start, end)


def merged_metadata(candidate: Candidate, start: int, end: int) -> dict[str, Any]:
    metadata = dict(candidate.metadata)
    metadata.pop(START_COLUMN, None)  # merged, it holds whole lines
    metadata.pop(END_COLUMN, None)
    if (start, end) != lines_of(candidate.metadata):
        metadata.pop("symbol", None)
        metadata.pop("symbolKind", None)
        metadata.pop("view", None)  # the file's text over the merged lines: whole
    metadata["startLine"], metadata["endLine"] = start, end
    return metadata
