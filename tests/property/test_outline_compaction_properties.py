"""Outline compaction under random adds, pins and limit changes: the budget always
holds, a pinned item is never outlined or evicted, every item shown as its outline is
handed to the caller to announce (once a change), and an outline is smaller than its file."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contextls.core.candidates import file as file_candidate
from contextls.core.candidates import text as text_candidate
from contextls.core.errors import ContextError
from contextls.core.outlines import outline_of
from contextls.core.window import Limits, Window


def python_file(index: int, functions: int, body: int) -> str:
    lines = [f'"""Module {index}."""', ""]
    for number in range(functions):
        lines += [f"def f{index}_{number}(a, b):", f'    """Adds {number}."""']
        lines += [f"    x{k} = a + b + {k}" for k in range(body)]
        lines += ["    return a", ""]
    return "\n".join(lines) + "\n"


Step = tuple[str, int, int, int, bool]
steps = st.lists(
    st.tuples(
        st.sampled_from(["file", "file", "file", "note", "limit"]),
        st.integers(0, 7),
        st.integers(1, 6),
        st.integers(0, 12),
        st.booleans(),
    ),
    min_size=1,
    max_size=40,
)


@given(steps)
@settings(max_examples=60, deadline=None)
def test_compaction_keeps_every_promise(plan: list[Step]) -> None:
    window = Window(Limits(max_items=8, max_tokens=600), lambda t: len(t) // 4 + 1, lambda: 0)
    window.outline_of = outline_of
    announced: set[str] = set()
    for action, index, functions, body, pin in plan:
        pinned_before = [item.id for item in window if item.pinned]
        try:
            if action == "file":
                window.add(
                    file_candidate(
                        python_file(index, functions, body),
                        f"file:///w/m{index}.py",
                        f"m{index}.py",
                        pin=pin and index % 3 == 0,
                    )
                )
            elif action == "note":
                window.add(text_candidate("text", f"note {index} " * (body * 5 + 1)))
            else:
                window.reconfigure(Limits(max_items=8, max_tokens=300 + 60 * body))
        except ContextError:
            window.outlined.clear()
            continue
        ids = [item.id for item in window.outlined]
        assert len(ids) == len(set(ids))  # one announcement per change of view
        for item in window.outlined:
            announced.add(item.id)
            assert not item.pinned
            assert item.metadata["wholeTokens"] > item.tokens
        window.outlined.clear()
        assert window.tokens <= window.limits.max_tokens
        assert window.tokens == sum(item.tokens for item in window)
        for item_id in pinned_before:
            assert item_id in window
            assert window.get(item_id).metadata.get("view") != "outline"
        for item in window:
            if item.metadata.get("view") == "outline":
                assert item.id in announced
