"""The collector is held off while a ranking runs and for a moment after the last ends,
then it is on again (as it was before) and what became garbage is collected."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Iterator

import pytest

from contextls.app import collector


@pytest.fixture(autouse=True)
def _soon(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(collector, "RESUME_AFTER", 0.05)
    yield
    _wait_for(lambda: not collector.is_paused())
    gc.enable()


def _wait_for(condition: object, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.01)


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_off_while_held_and_on_again_after_with_the_garbage_collected() -> None:
    gc.enable()
    with collector.paused():
        assert not gc.isenabled()
        cycle = _Cycle()
        gone = weakref.ref(cycle)
        del cycle
    assert not gc.isenabled() and gone() is not None  # not yet: a request may follow
    _wait_for(gc.isenabled)
    _wait_for(lambda: gone() is None)


def test_a_ranking_that_starts_in_the_moment_after_keeps_it_off() -> None:
    gc.enable()
    with collector.paused():
        pass
    entered = threading.Event()
    leave = threading.Event()

    def rank() -> None:
        with collector.paused():
            entered.set()
            leave.wait(30)

    thread = threading.Thread(target=rank)
    thread.start()
    entered.wait(30)
    time.sleep(0.2)  # past RESUME_AFTER of the first: the second still holds it
    assert not gc.isenabled()
    leave.set()
    thread.join()
    _wait_for(gc.isenabled)


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with collector.paused():
        pass
    _wait_for(lambda: not collector.is_paused())
    assert not gc.isenabled()
