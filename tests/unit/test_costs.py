"""What is counted is what is rendered: the window's total is the exact count of its
markdown render, and a render in any format fits the budget, with the real tokenizers,
over text nobody here wrote (Python's standard library)."""

from __future__ import annotations

import json
import random
import sysconfig
from pathlib import Path

import pytest

from contextls.app.tokenizers import MissingTokenizer
from contextls.app.tokenizers import tokenizer as offline_tokenizer
from contextls.core.candidates import Candidate
from contextls.core.render import render
from contextls.core.tokens import Tokenizer
from contextls.core.window import Limits, Window
from contextls.protocol import RenderFormat

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SOURCES = sorted((STDLIB / "json").glob("*.py")) + sorted((STDLIB / "email").glob("*.py"))[:12]


def candidates(seed: int) -> list[Candidate]:
    """Files, regions (with fences inside some), notes and errors, from the stdlib."""
    chooser = random.Random(seed)
    made: list[Candidate] = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        rel = f"lib/{path.parent.name}/{path.name}"
        lines = text.splitlines(keepends=True)
        if len(text) < 6000 and chooser.random() < 0.5:
            made.append(Candidate("file", text, {"path": rel}, False))
            continue
        start = chooser.randrange(max(1, len(lines) - 30))
        end = min(len(lines), start + chooser.randrange(3, 30))
        meta = {"path": rel, "startLine": start + 1, "endLine": end}
        if chooser.random() < 0.3:
            meta["symbol"] = "Parser.parse"
        made.append(Candidate("code", "".join(lines[start:end]), meta, False))
    made.append(Candidate("text", "A note with ```fences``` inside\n````\nodd\n````", {}, False))
    made.append(Candidate("error", 'Traceback ...\nKeyError: "x"\n', {}, False))
    made.append(Candidate("custom", "café — naïve ✓ 中文", {"title": "Unicode"}, False))
    return made


EXACT = ["o200k_base", "cl100k_base", "claude-v3", "claude-v4.7", "qwen3.5", "llama3", "tekken"]
"""Every exact tokenizer (the open models' need their extras, which `make setup` installs)."""


def loaded(encoding: str) -> Tokenizer:
    tokenizer = offline_tokenizer(encoding)
    try:
        tokenizer.load()
    except MissingTokenizer as error:
        pytest.skip(str(error))
    return tokenizer


@pytest.mark.parametrize("encoding", EXACT)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_window_counts_exactly_what_markdown_renders(encoding: str, seed: int) -> None:
    tokenizer = loaded(encoding)
    window = Window(Limits(50, 6_000, "fifo"), tokenizer.count, lambda: 1, encoding)
    chooser = random.Random(seed)
    for candidate in candidates(seed):
        window.add(candidate)
        if len(window) > 2 and chooser.random() < 0.3:
            victim = chooser.choice(list(window))
            window.set_pinned(victim.id, not victim.pinned)
            window.evict_to_fit(protect=())
        if len(window) > 2 and chooser.random() < 0.2:
            window.set_stale(chooser.choice(list(window)).id, True, "changed")
        whole = render(list(window), "markdown", tokenizer.count).text
        assert window.total == tokenizer.count(whole), (window.total, len(window))
        assert window.total <= window.limits.max_tokens


@pytest.mark.parametrize("encoding", ["o200k_base", "claude-v3", "gemma3-estimate"])
@pytest.mark.parametrize("fmt", ["markdown", "xml", "json"])
def test_a_render_never_exceeds_the_budget_and_says_what_it_left_out(
    fmt: RenderFormat, encoding: str
) -> None:
    tokenizer = loaded(encoding)
    window = Window(Limits(50, 1_000, "fifo"), tokenizer.count, lambda: 1, encoding)
    for n in range(50):
        window.add(Candidate("text", f"note {n}: remember the {n}th thing", {}, n == 3))
    rendered = render(
        list(window),
        fmt,
        tokenizer.count,
        None,
        (),
        window.limits.max_tokens,
        tokenizer.count_pieces,
    )
    assert tokenizer.count(rendered.text) == rendered.tokens <= 1_000
    assert "ctx-4" in rendered.item_ids  # pinned: first in
    if fmt == "markdown":
        assert rendered.omitted_ids == [] and rendered.warnings == []
        if encoding != "gemma3-estimate":  # an estimate rounds up piece by piece
            assert rendered.tokens == window.total
    else:
        assert rendered.omitted_ids, "xml and json frame notes more heavily than markdown"
        assert any(fmt in warning and "left out" in warning for warning in rendered.warnings)
        if fmt == "json":
            json.loads(rendered.text)
