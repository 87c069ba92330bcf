"""Rendering a window for an LLM (contextls.core.render): markdown, xml, json."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextls.app.tokenizers import tokenizer as offline_tokenizer
from contextls.core.errors import ContextError
from contextls.core.items import Item
from contextls.core.render import Rendered, fence_for, render, select
from contextls.core.tokens import Tokenizer
from contextls.protocol import ItemKind, RenderFormat

FORMATS: tuple[RenderFormat, ...] = ("markdown", "xml", "json")


def words(text: str) -> int:
    return len(text.split())


def make_item(
    n: int, kind: ItemKind, content: str, tokens: int | None = None, **metadata: Any
) -> Item:
    return Item(
        id=f"ctx-{n}",
        kind=kind,
        content=content,
        metadata=metadata,
        timestamp=1_000 + n,
        tokens=words(content) if tokens is None else tokens,
        seq=n,
    )


APP_CODE = "def main() -> None:\n    print('hi')\n"


def code_item(n: int = 1, **metadata: Any) -> Item:
    meta = {"path": "src/app.py", "startLine": 10, "endLine": 24, "language": "python"}
    return make_item(n, "code", APP_CODE, **{**meta, **metadata})


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return offline_tokenizer("o200k_base")


# ----------------------------------------------------------------- markdown


def test_markdown_starts_with_the_context_heading() -> None:
    assert render([code_item()], "markdown", words).text.startswith("## Context\n")


def test_markdown_of_an_empty_window_is_just_the_heading() -> None:
    rendered = render([], "markdown", words)
    assert rendered.text == "## Context\n\n"
    assert rendered.item_ids == [] and rendered.omitted_ids == []


def test_code_section_names_path_and_lines_and_tags_the_fence() -> None:
    text = render([code_item()], "markdown", words).text
    assert "### Code (from src/app.py:10-24) · ctx-1\n```python\n" + APP_CODE + "```\n" in text


def test_one_line_region_names_a_single_line() -> None:
    text = render([code_item(startLine=7, endLine=7)], "markdown", words).text
    assert "### Code (from src/app.py:7) · ctx-1\n" in text


def test_symbol_is_named_in_the_heading() -> None:
    text = render([code_item(symbol="main")], "markdown", words).text
    assert "### Code: main (from src/app.py:10-24) · ctx-1\n" in text


def test_fence_language_is_guessed_from_the_path_when_metadata_has_none() -> None:
    item = make_item(1, "code", "fn main() {}", path="src/main.rs", startLine=1, endLine=1)
    assert "### Code (from src/main.rs:1) · ctx-1\n```rust\nfn main() {}\n```\n" in (
        render([item], "markdown", words).text
    )


def test_metadata_language_wins_over_the_guess() -> None:
    item = code_item(language="cython")
    assert "```cython\n" in render([item], "markdown", words).text


def test_file_item_heading_names_the_path_without_lines() -> None:
    item = make_item(1, "file", "import os\n", path="src/app.py", language="python")
    text = render([item], "markdown", words).text
    assert "### File (from src/app.py) · ctx-1\n```python\nimport os\n```\n" in text


def test_error_item_has_its_own_heading_and_an_untagged_fence() -> None:
    item = make_item(1, "error", "KeyError: 'x'")
    text = render([item], "markdown", words).text
    assert "### Error · ctx-1\n```\nKeyError: 'x'\n```\n" in text


def test_text_item_fence_is_tagged_text() -> None:
    item = make_item(1, "text", "Please keep the API stable.")
    assert "### Text · ctx-1\n```text\nPlease keep the API stable.\n```\n" in (
        render([item], "markdown", words).text
    )


def test_repl_and_custom_items_have_their_headings() -> None:
    repl = make_item(1, "repl-history", ">>> 1 + 1\n2")
    custom = make_item(2, "custom", "notes", title="Plan")
    text = render([repl, custom], "markdown", words).text
    assert "### REPL history · ctx-1\n" in text
    assert "### Custom: Plan · ctx-2\n" in text


def test_sections_follow_window_order() -> None:
    items = [make_item(n, "text", f"note {n}") for n in (3, 1, 2)]
    text = render(items, "markdown", words).text
    assert [text.index(f"note {n}") for n in (3, 1, 2)] == sorted(
        text.index(f"note {n}") for n in (3, 1, 2)
    )


def test_fence_is_longer_than_any_backtick_run_in_the_content() -> None:
    content = "Example:\n```python\nx = 1\n```\nand\n````\nnested\n````\n"
    item = make_item(1, "text", content, language="markdown")

    text = render([item], "markdown", words).text

    assert "### Text · ctx-1\n`````markdown\n" + content + "`````\n" in text
    # The content cannot close the fence: no line of it is a run of 5 backticks.
    assert not any(line.startswith("`````") for line in content.splitlines())


@pytest.mark.parametrize(
    ("content", "fence"),
    [
        ("plain", "```"),
        ("inline `code` and ``double``", "```"),
        ("```", "````"),
        ("a ```` b ``` c", "`````"),
        ("``````", "```````"),
    ],
)
def test_fence_for(content: str, fence: str) -> None:
    assert fence_for(content) == fence


# ------------------------------------------------------------------- select


def _kinds_items() -> list[Item]:
    kinds: list[ItemKind] = ["code", "text", "error", "code", "text", "code"]
    return [make_item(n, kind, f"{kind} {n}") for n, kind in enumerate(kinds, start=1)]


def test_select_without_filters_keeps_everything_in_order() -> None:
    items = _kinds_items()
    assert select(items, None, None) == items


def test_select_by_kinds() -> None:
    chosen = select(_kinds_items(), ["code", "error"], None)
    assert [item.id for item in chosen] == ["ctx-1", "ctx-3", "ctx-4", "ctx-6"]


def test_select_limit_keeps_the_most_recent_in_chronological_order() -> None:
    chosen = select(_kinds_items(), None, 2)
    assert [item.id for item in chosen] == ["ctx-5", "ctx-6"]


def test_select_kinds_then_limit() -> None:
    chosen = select(_kinds_items(), ["code"], 2)
    assert [item.id for item in chosen] == ["ctx-4", "ctx-6"]


def test_select_limit_larger_than_the_window_keeps_all() -> None:
    assert len(select(_kinds_items(), None, 100)) == 6


# --------------------------------------------------------------- maxTokens


def _sized_items(tokenizer: Tokenizer) -> list[Item]:
    items = []
    for n in range(1, 11):
        content = "\n".join(f"def f{n}_{k}(x):\n    return x * {k}" for k in range(n))
        items.append(
            Item(
                id=f"ctx-{n}",
                kind="code",
                content=content,
                metadata={"path": f"src/m{n}.py", "startLine": 1, "endLine": 2 * n},
                timestamp=n,
                tokens=tokenizer.count(content),
                seq=n,
            )
        )
    return items


def _assert_budget_result(
    rendered: Rendered, items: list[Item], budget: int, fmt: RenderFormat, tokenizer: Tokenizer
) -> None:
    all_ids = [item.id for item in items]
    kept = len(rendered.item_ids)
    assert rendered.tokens == tokenizer.count(rendered.text)
    assert rendered.tokens <= budget
    # The most recent items that fit, in window order; the rest are reported.
    assert rendered.item_ids == all_ids[len(all_ids) - kept :]
    assert rendered.omitted_ids == all_ids[: len(all_ids) - kept]
    # ...and as many as fit: one more (the next older) would break the budget.
    if kept < len(items):
        assert render(items[-(kept + 1) :], fmt, tokenizer.count).tokens > budget


@pytest.mark.parametrize("fmt", FORMATS)
def test_max_tokens_keeps_the_most_recent_items_that_fit(
    fmt: RenderFormat, tokenizer: Tokenizer
) -> None:
    items = _sized_items(tokenizer)
    full = render(items, fmt, tokenizer.count)
    frame = render([], fmt, tokenizer.count).tokens
    assert full.tokens == tokenizer.count(full.text)

    for budget in range(frame, full.tokens + 5, 7):
        rendered = render(items, fmt, tokenizer.count, max_tokens=budget)
        _assert_budget_result(rendered, items, budget, fmt, tokenizer)

    everything = render(items, fmt, tokenizer.count, max_tokens=full.tokens)
    assert everything.item_ids == [item.id for item in items]
    assert everything.text == full.text


def test_max_tokens_drops_an_item_larger_than_the_budget(tokenizer: Tokenizer) -> None:
    items = _sized_items(tokenizer)
    budget = items[-1].tokens  # the newest alone plus its heading does not fit
    rendered = render(items, "markdown", tokenizer.count, max_tokens=budget)
    assert rendered.item_ids == []
    assert rendered.omitted_ids == [item.id for item in items]
    assert rendered.tokens <= budget


@pytest.mark.parametrize("fmt", FORMATS)
def test_budget_below_the_document_frame_is_never_exceeded(
    fmt: RenderFormat, tokenizer: Tokenizer
) -> None:
    # The empty document ("## Context\n", "<context>\n</context>\n", ...) costs
    # a few tokens. A smaller budget must be refused or met, never exceeded.
    items = _sized_items(tokenizer)[:2]
    for budget in (1, 2):
        try:
            rendered = render(items, fmt, tokenizer.count, max_tokens=budget)
        except ContextError:
            continue
        assert rendered.tokens <= budget, (fmt, budget, rendered.text)


# ------------------------------------------------------------------ history


def test_history_follows_the_window_under_its_own_heading() -> None:
    window_items = [code_item(1)]
    history = [make_item(7, "error", "old failure"), make_item(5, "text", "old note")]

    rendered = render(window_items, "markdown", words, history=history)

    text = rendered.text
    assert "## Relevant history\n" in text
    assert text.index("### Code") < text.index("## Relevant history") < text.index("old failure")
    assert text.index("old failure") < text.index("old note")
    assert rendered.history_ids == ["ctx-7", "ctx-5"]
    assert rendered.item_ids == ["ctx-1"]


def test_no_history_section_without_history() -> None:
    assert "Relevant history" not in render([code_item()], "markdown", words).text


def test_max_tokens_spends_the_budget_on_the_window_before_history(
    tokenizer: Tokenizer,
) -> None:
    items = _sized_items(tokenizer)[:2]
    history = [Item("ctx-90", "text", "archived " * 200, {}, 0, tokenizer.count("archived " * 200))]
    window_only = render(items, "markdown", tokenizer.count).tokens

    rendered = render(items, "markdown", tokenizer.count, max_tokens=window_only, history=history)

    assert rendered.item_ids == ["ctx-1", "ctx-2"]
    assert rendered.history_ids == []
    assert rendered.tokens <= window_only


# ---------------------------------------------------------------------- xml


def test_xml_is_well_formed_with_attributes_and_escaped_content() -> None:
    tricky = "if a < b && c > d: print(\"<tag>\") # ]]> 'q'"
    items = [
        code_item(1),
        make_item(2, "text", tricky, title='say "hi" & <bye>'),
        make_item(3, "file", "x = 1\n", path="src/a&b.py"),
    ]

    root = ET.fromstring(render(items, "xml", words).text)

    assert root.tag == "context"
    elements = root.findall("item")
    assert [e.get("id") for e in elements] == ["ctx-1", "ctx-2", "ctx-3"]
    assert [e.get("kind") for e in elements] == ["code", "text", "file"]
    assert elements[0].get("source") == "src/app.py:10-24"
    assert elements[0].get("language") == "python"
    assert elements[2].get("source") == "src/a&b.py"
    assert elements[1].get("source") is None
    assert [(e.text or "").strip("\n") for e in elements] == [
        APP_CODE.rstrip("\n"),
        tricky,
        "x = 1",
    ]


def test_xml_history_is_its_own_element() -> None:
    rendered = render([code_item(1)], "xml", words, history=[make_item(4, "error", "boom")])
    root = ET.fromstring(rendered.text)
    assert [e.get("id") for e in root.findall("item")] == ["ctx-1"]
    assert [e.get("id") for e in root.findall("history/item")] == ["ctx-4"]


def test_xml_of_a_repl_transcript_with_terminal_colours_is_well_formed() -> None:
    # REPL output often carries ANSI escapes (ESC is not allowed in XML 1.0).
    transcript = ">>> run()\n\x1b[31mError: failed\x1b[0m\n"
    item = make_item(1, "repl-history", transcript)

    root = ET.fromstring(render([item], "xml", words).text)

    element = root.find("item")
    assert element is not None
    assert "Error: failed" in (element.text or "")


# --------------------------------------------------------------------- json


def test_json_parses_with_all_fields() -> None:
    items = [code_item(1, symbol="main"), make_item(2, "error", 'boom \x1b[0m "q"')]
    history = [make_item(3, "text", "old note")]

    document = json.loads(render(items, "json", words, history=history).text)

    assert set(document) == {"context", "history"}
    first, second = document["context"]
    assert first == {
        "id": "ctx-1",
        "kind": "code",
        "label": "src/app.py:10-24 (main)",
        "source": "src/app.py:10-24",
        "language": "python",
        "pinned": False,
        "stale": False,
        "view": "whole",
        "content": APP_CODE,
    }
    assert second["source"] is None and second["language"] is None
    assert second["content"] == 'boom \x1b[0m "q"'
    assert [entry["id"] for entry in document["history"]] == ["ctx-3"]
    assert document["history"][0]["language"] == "text"


def test_json_of_an_empty_window() -> None:
    assert json.loads(render([], "json", words).text) == {"context": [], "history": []}


@pytest.mark.parametrize("fmt", FORMATS)
def test_rendered_tokens_are_the_count_of_the_text(fmt: RenderFormat) -> None:
    rendered = render([code_item(1), make_item(2, "text", "a b c")], fmt, words)
    assert rendered.tokens == words(rendered.text)
    assert rendered.item_ids == ["ctx-1", "ctx-2"] and rendered.omitted_ids == []


def test_markdown_fences_open_and_close_in_pairs() -> None:
    # Every opening fence in the output has a matching closing fence of equal length.
    items = [code_item(1), make_item(2, "text", "has ``` inside"), make_item(3, "error", "e")]
    text = render(items, "markdown", words).text
    fences = re.findall(r"^(`{3,})", text, flags=re.MULTILINE)
    assert len(fences) % 2 == 0
    assert all(fences[i] == fences[i + 1] for i in range(0, len(fences), 2))


def test_a_budget_keeps_pinned_items_first() -> None:
    pinned = make_item(1, "text", "pinned words " * 60)
    pinned.pinned = True
    newer = [make_item(n, "text", f"note {n} " * 30) for n in range(2, 6)]
    budget = pinned.tokens + newer[-1].tokens + 60

    rendered = render([pinned, *newer], "markdown", words, max_tokens=budget)

    assert rendered.item_ids[0] == "ctx-1"  # kept, and in its place in time
    assert "ctx-5" in rendered.item_ids and rendered.tokens <= budget
    assert "ctx-2" in rendered.omitted_ids and rendered.warnings == []


def test_pinned_items_over_the_budget_are_said_to_be_left_out() -> None:
    big = [make_item(n, "text", f"pinned {n} " * 80) for n in range(1, 4)]
    for item in big:
        item.pinned = True
    budget = big[0].tokens + 40

    rendered = render(big, "markdown", words, max_tokens=budget)

    assert rendered.item_ids == ["ctx-3"]  # the newest pinned one that fits
    (warning,) = rendered.warnings
    assert "pinned items alone need" in warning and "ctx-1, ctx-2" in warning


# ------------------------------------------------- counting piece by piece


def _tricky_text() -> st.SearchStrategy[str]:
    pieces = st.sampled_from(
        [
            " ",
            "  ",
            "\n",
            "\n\n",
            "\r\n",
            "\t",
            "/",
            "//",
            "#",
            "# x",
            "<",
            "</a>",
            ">",
            "`",
            "```",
            "{",
            "},",
            "[",
            "é",
            "\u0301",
            "日本",
            "word",
            "Def",
            "'s",
            "42",
            "1234",
            "!",
            "\\",
            '"',
            "\x1b[31m",
            "    ",
            "\n    {",
        ]
    )
    return st.lists(pieces, max_size=12).map("".join)


@st.composite
def _windows(draw: st.DrawFn) -> list[Item]:
    items = []
    for n in range(draw(st.integers(0, 4))):
        content = draw(_tricky_text())
        metadata: dict[str, Any] = {}
        if draw(st.booleans()):
            metadata = {"path": draw(st.sampled_from(["a.py", "/x/y.c", "n<o>te", "#h"]))}
        if draw(st.booleans()):
            metadata["language"] = draw(st.sampled_from(["", "python", "c++", "x/y"]))
        item = make_item(
            n, draw(st.sampled_from(["code", "text", "error", "file"])), content, **metadata
        )
        item.pinned = draw(st.booleans())
        item.stale = draw(st.booleans())
        items.append(item)
    return items


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(window=_windows(), history=_windows())
def test_a_render_counted_piece_by_piece_is_the_count_of_its_text(
    fmt: RenderFormat, encoding: str, window: list[Item], history: list[Item]
) -> None:
    # The pieces are cut where the pre-tokenizer splits anyway, whatever the items hold.
    tokenizer = _TOKENIZERS.setdefault(encoding, offline_tokenizer(encoding))
    for item in history:
        item.id = f"old-{item.id}"
    rendered = render(window, fmt, tokenizer.count, None, history, 10**6, tokenizer.count_pieces)
    assert rendered.tokens == tokenizer.count(rendered.text)


_TOKENIZERS: dict[str, Tokenizer] = {}


def test_a_second_render_of_the_same_window_counts_nothing_again() -> None:
    counted: list[str] = []
    tokenizer = offline_tokenizer("o200k_base")
    count = tokenizer.count

    def spying(text: str) -> int:
        counted.append(text)
        return count(text)

    tokenizer.count = spying  # type: ignore[method-assign]
    items = [code_item(n) for n in range(1, 4)]
    first = render(items, "markdown", spying, count_pieces=tokenizer.count_pieces)
    # The frame, each heading, one body (the three items' texts are the same).
    assert len(counted) == 5
    counted.clear()
    again = render(items, "markdown", spying, count_pieces=tokenizer.count_pieces)
    assert (again.text, again.tokens, counted) == (first.text, first.tokens, [])
    items.append(code_item(4, symbol="added"))
    render(items, "markdown", spying, count_pieces=tokenizer.count_pieces)
    assert len(counted) == 1  # the new heading: its text is one seen before
