"""When a burst is committed and when the search index catches up (contextls.pacing).

The Pacer is driven here by hand: a fake Timing records what it asks for
(``later`` timers, ``after_answers`` callbacks) and the test runs them, with
``time.monotonic`` replaced by a clock the test moves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import SimpleNamespace

import pytest

from contextls import pacing
from contextls.pacing import COMMIT_DELAY, IDLE, SETTLE, Pacer


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class FakeTiming:
    """Records what the pacer schedules; the test decides when it runs."""

    def __init__(self) -> None:
        self.timers: list[tuple[float, Callable[[], None]]] = []
        self.answers: list[Callable[[], None]] = []

    def later(self, delay: float, callback: Callable[[], None]) -> None:
        self.timers.append((delay, callback))

    def after_answers(self, callback: Callable[[], None]) -> None:
        self.answers.append(callback)

    def answers_written(self) -> None:
        callbacks, self.answers = self.answers, []
        for callback in callbacks:
            callback()

    @property
    def delays(self) -> list[float]:
        return [delay for delay, _ in self.timers]

    def fire(self, delay: float) -> None:
        """Run the oldest pending timer of ``delay``."""
        for index, (pending, callback) in enumerate(self.timers):
            if pending == delay:
                del self.timers[index]
                callback()
                return
        raise AssertionError(f"no timer of {delay} s pending (pending: {self.delays})")


class Harness:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.timing = FakeTiming()
        self.commits = 0
        self.index_results: list[bool | None] = []
        self.index_calls = 0
        self.pacer = Pacer(self.timing, self.commit, self.index_some)

    def commit(self) -> None:
        self.commits += 1

    def index_some(self) -> bool | None:
        self.index_calls += 1
        return self.index_results.pop(0)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    fake = Clock()
    monkeypatch.setattr(pacing, "time", SimpleNamespace(monotonic=fake))
    yield fake


@pytest.fixture
def h(clock: Clock) -> Harness:
    return Harness(clock)


# ------------------------------------------------------------------ commit


def test_a_young_burst_is_not_committed_after_its_answers(h: Harness) -> None:
    h.pacer.request(began_burst=True)
    h.clock.advance(COMMIT_DELAY * 0.9)
    h.timing.answers_written()
    assert h.commits == 0


def test_a_burst_commit_delay_old_is_committed_after_the_answers(h: Harness) -> None:
    h.pacer.request(began_burst=True)
    h.timing.answers_written()
    assert h.commits == 0
    h.clock.advance(COMMIT_DELAY * 1.01)
    h.pacer.request(began_burst=False)  # the same burst, still going
    assert h.commits == 0, "never on the request path"
    h.timing.answers_written()
    assert h.commits == 1


def test_the_age_counts_from_the_start_of_the_burst(h: Harness) -> None:
    h.pacer.request(began_burst=True)
    for _ in range(4):  # a steady stream of requests, each well under COMMIT_DELAY apart
        h.clock.advance(COMMIT_DELAY * 0.3)
        h.pacer.request(began_burst=False)
        h.timing.answers_written()
    assert h.commits == 1  # at 1.2 x COMMIT_DELAY, not never


def test_one_check_per_batch_of_answers(h: Harness) -> None:
    for _ in range(5):
        h.pacer.request(began_burst=False)
    assert len(h.timing.answers) == 1
    h.timing.answers_written()
    h.pacer.request(began_burst=False)
    assert len(h.timing.answers) == 1, "armed again once the check ran"


def test_settle_timer_is_armed_once_per_burst_and_commits(h: Harness) -> None:
    h.pacer.request(began_burst=True)
    h.pacer.request(began_burst=False)
    h.pacer.request(began_burst=False)
    assert h.timing.delays == [SETTLE]
    h.timing.answers_written()  # too young: left to the settle timer
    assert h.commits == 0
    h.clock.advance(SETTLE * 1.01)
    h.timing.fire(SETTLE)
    assert h.commits == 1
    h.pacer.request(began_burst=True)  # the next burst gets its own
    assert h.timing.delays == [SETTLE]


def test_a_burst_begun_while_the_settle_timer_is_pending_shares_it(h: Harness) -> None:
    h.pacer.request(began_burst=True)
    h.clock.advance(COMMIT_DELAY * 2)
    h.timing.answers_written()
    assert h.commits == 1  # committed early; the settle timer is still pending
    h.pacer.request(began_burst=True)
    assert h.timing.delays == [SETTLE], "no second timer"
    h.timing.fire(SETTLE)
    assert h.commits == 2, "the pending timer commits the new burst"


# ------------------------------------------------------------------- index


def test_a_commit_schedules_indexing_after_idle_once(h: Harness) -> None:
    h.pacer.committed()
    h.pacer.committed()
    assert h.timing.delays == [IDLE]
    assert h.index_calls == 0


def test_indexing_repeats_at_once_while_more_waits_and_stops_when_done(h: Harness) -> None:
    h.index_results = [True, True, False]
    h.pacer.committed()
    h.clock.advance(IDLE * 1.01)
    h.timing.fire(IDLE)
    assert h.timing.delays == [0]
    h.timing.fire(0)
    assert h.timing.delays == [0]
    h.timing.fire(0)
    assert h.index_calls == 3
    assert h.timing.delays == [], "done: nothing more scheduled"


def test_indexing_is_retried_after_idle_when_the_store_is_busy(h: Harness) -> None:
    h.index_results = [None, None, False]
    h.pacer.committed()
    h.clock.advance(IDLE * 1.01)
    h.timing.fire(IDLE)
    assert h.timing.delays == [IDLE]
    h.clock.advance(IDLE * 1.01)
    h.timing.fire(IDLE)
    assert h.timing.delays == [IDLE]
    h.clock.advance(IDLE * 1.01)
    h.timing.fire(IDLE)
    assert h.index_calls == 3
    assert h.timing.delays == []


def test_indexing_waits_while_requests_keep_coming(h: Harness) -> None:
    h.index_results = [False]
    h.pacer.committed()
    for _ in range(5):
        h.clock.advance(IDLE * 0.6)
        h.pacer.request(began_burst=False)
        h.clock.advance(IDLE * 0.6)
        h.timing.fire(IDLE)  # 0.6 x IDLE since the last request: not idle
        assert h.index_calls == 0
        assert IDLE in h.timing.delays
    h.clock.advance(IDLE * 1.01)
    h.timing.fire(IDLE)
    assert h.index_calls == 1
    assert IDLE not in h.timing.delays


def test_a_request_between_index_batches_pauses_indexing(h: Harness) -> None:
    h.index_results = [True, False]
    h.pacer.committed()
    h.clock.advance(IDLE * 1.01)
    h.timing.fire(IDLE)
    assert h.timing.delays == [0]
    h.pacer.request(began_burst=True)  # a request arrives before the next batch
    h.timing.fire(0)
    assert h.index_calls == 1, "no batch right after a request"
    assert IDLE in h.timing.delays
    h.clock.advance(IDLE * 1.01)
    h.timing.fire(IDLE)
    assert h.index_calls == 2
