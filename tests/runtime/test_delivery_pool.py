"""The delivery pool: a call that overruns its timeout gives its thread's place to a new one."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from _helpers import assert_no_new_threads
from _runtime_helpers import TIMEOUT

from praxo_actors.runtime._events._delivery import DeliveryPool, Worker
from supervisors import ManualClock

LIMIT = 5.0


@pytest.fixture
def clock() -> ManualClock:
    """Return a clock that moves only when the test says."""
    return ManualClock(100.0)


@pytest.fixture
def pool(clock: ManualClock) -> Iterator[DeliveryPool]:
    """Return a one-thread pool on ``clock``; shut it and check its threads ended at teardown."""
    before = set(threading.enumerate())
    made = DeliveryPool(1, LIMIT, name="test-delivery", clock=clock)
    yield made
    assert made.shutdown(TIMEOUT) == []
    assert_no_new_threads(before, TIMEOUT)


class _Call:
    """A job making one call that blocks until released; it records the reports it hears."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.done = threading.Event()
        self.reports: list[float] = []
        self.thread = threading.current_thread()

    def __call__(self, worker: Worker) -> None:
        self.thread = threading.current_thread()
        worker.begin(self.reports.append)
        try:
            self.entered.set()
            self.release.wait(TIMEOUT)
        finally:
            worker.end()
            self.done.set()


def test_a_call_within_its_timeout_keeps_its_place(pool: DeliveryPool, clock: ManualClock) -> None:
    """A call that has run less than the timeout is not retired; check says when it would be."""
    call = _Call()
    assert pool.submit(call)
    assert call.entered.wait(TIMEOUT)
    clock.advance(LIMIT - 1)
    assert pool.check() == pytest.approx(1.0)
    assert (pool.threads, pool.retired, call.reports) == (1, 0, [])
    call.release.set()
    assert call.done.wait(TIMEOUT)


def test_an_overrunning_call_is_reported_and_its_place_given_to_a_new_thread(
    pool: DeliveryPool, clock: ManualClock
) -> None:
    """Past the timeout the call is reported once and its thread retired; the job queued behind
    it runs on a fresh thread while the stuck call still blocks."""
    stuck, behind = _Call(), _Call()
    assert pool.submit(stuck) and pool.submit(behind)
    assert stuck.entered.wait(TIMEOUT)
    assert not behind.entered.is_set()
    clock.advance(LIMIT)
    pool.check()
    assert behind.entered.wait(TIMEOUT)
    assert stuck.reports == [pytest.approx(LIMIT)]
    assert behind.thread != stuck.thread
    assert (pool.threads, pool.retired, pool.retired_total) == (1, 1, 1)
    pool.check()  # a retired call is reported once only
    assert stuck.reports == [pytest.approx(LIMIT)]
    stuck.release.set()
    behind.release.set()
    assert stuck.done.wait(TIMEOUT) and behind.done.wait(TIMEOUT)


def test_check_without_calls_in_progress(pool: DeliveryPool, clock: ManualClock) -> None:
    """With no call in progress nothing is retired, however late it is."""
    idle = threading.Event()
    assert pool.submit(lambda _worker: idle.set())
    assert idle.wait(TIMEOUT)
    clock.advance(LIMIT * 10)
    assert pool.check() is None
    assert pool.retired_total == 0


def test_shutdown_names_the_threads_still_in_a_call(clock: ManualClock) -> None:
    """Shutting down names the retired thread still in its call without waiting on it, takes
    nothing more, and the thread ends once its call returns."""
    made = DeliveryPool(1, LIMIT, name="test-shut", clock=clock)
    call = _Call()
    assert made.submit(call)
    assert call.entered.wait(TIMEOUT)
    clock.advance(LIMIT)
    made.check()
    assert made.shutdown(TIMEOUT) == ["test-shut-stuck-0"]
    assert not made.submit(lambda _worker: None)
    call.release.set()
    call.thread.join(TIMEOUT)
    assert not call.thread.is_alive()
    assert made.shutdown(TIMEOUT) == []
