"""A large text counted in Claude's tokens in the worker process counts as it does here."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from contextls.app import counting_process
from contextls.app.tokenizers import load_counter

TEXT = "def parse(header: str) -> dict[str, str]:\n    return {}  # “quoted” Grüße\n"


@pytest.fixture(autouse=True)
def _no_worker_left() -> Iterator[None]:
    yield
    counting_process.close()


def test_a_large_text_is_counted_in_the_worker_as_here() -> None:
    counter = load_counter("claude-v4.7")
    assert isinstance(counter, counting_process.OffProcessCounter)
    large = (TEXT * (counting_process.OFF_PROCESS_CHARS // len(TEXT) + 1)) + "\n\n"
    assert counter.count(large) == counter.here.count(large)
    assert counting_process._pool is not None  # it went to the worker
    assert counter.count(TEXT) == counter.here.count(TEXT)


def test_a_worker_that_fails_leaves_the_count_to_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counter = load_counter("claude-v4.7")
    large = TEXT * (counting_process.OFF_PROCESS_CHARS // len(TEXT) + 1)

    class Broken:
        def submit(self, *args: object) -> object:
            raise RuntimeError("cannot schedule new futures after shutdown")

    monkeypatch.setattr(counting_process, "_running", lambda: Broken())
    assert counter.count(large) == counter.here.count(large)
