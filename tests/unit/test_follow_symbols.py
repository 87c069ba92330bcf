"""A definition followed by its name is missing only when a clean parse lacks it."""

from __future__ import annotations

from contextls.core.follow import QUALIFIED_NAME, follow
from contextls.core.items import Item

SOURCE = "import os\n\n\ndef helper(x):\n    return x + 1\n"


def item() -> Item:
    content = "def helper(x):\n    return x + 1\n"
    metadata = {"path": "m.py", "language": "python", "startLine": 4, "endLine": 5}
    metadata[QUALIFIED_NAME] = "helper"
    return Item("ctx-1", "code", content, metadata, 0, 0)


def test_a_half_typed_definition_above_leaves_the_item_alone() -> None:
    typing = "import os\n\ndef \n\ndef helper(x):\n    return x + 1\n"
    assert follow([item()], typing) in ([], [follow([item()], typing)[0]])
    plans = follow([item()], typing)
    assert all(plan.why != "missing" for plan in plans), plans
    half_class = "import os\n\nclass Broken(\n\n\ndef helper(x):\n    return x + 1\n"
    assert all(plan.why != "missing" for plan in follow([item()], half_class))


def test_a_definition_removed_from_clean_code_is_missing() -> None:
    (plan,) = follow([item()], "import os\n\n\ndef other(x):\n    return x\n")
    assert plan.stale and plan.why == "missing"


def test_moved_code_is_followed_even_while_the_file_does_not_parse() -> None:
    moved = "import os\n\n\n\n\ndef helper(x):\n    return x + 1\n\nx = (\n"
    (plan,) = follow([item()], moved)
    assert plan.lines == (6, 7) and plan.why is None
