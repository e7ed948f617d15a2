"""The delivery pool: a slow call hands its thread's place to a new one; a stuck one is reported."""

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
    assert made.shutdown(TIMEOUT) == ["test-shut-handoff-0"]
    assert not made.submit(lambda _worker: None)
    call.release.set()
    call.thread.join(TIMEOUT)
    assert not call.thread.is_alive()
    assert made.shutdown(TIMEOUT) == []


HANDOFF = 0.5


@pytest.fixture
def handoff_pool(clock: ManualClock) -> Iterator[DeliveryPool]:
    """Return a one-thread pool that hands a call off at ``HANDOFF`` and reports it at ``LIMIT``."""
    before = set(threading.enumerate())
    made = DeliveryPool(1, LIMIT, handoff=HANDOFF, name="test-handoff", clock=clock)
    yield made
    assert made.shutdown(TIMEOUT) == []
    assert_no_new_threads(before, TIMEOUT)


def test_a_slow_call_is_handed_off_before_it_is_reported(
    handoff_pool: DeliveryPool, clock: ManualClock
) -> None:
    """Past the hand-off time a call leaves the pool (the job behind it runs on a fresh thread)
    without a report; past the timeout it is reported, once; check says when each comes."""
    pool = handoff_pool
    slow, behind = _Call(), _Call()
    assert pool.submit(slow) and pool.submit(behind)
    assert slow.entered.wait(TIMEOUT)
    assert pool.check() == pytest.approx(HANDOFF)
    clock.advance(HANDOFF)
    pool.check()  # (the watchdog's thread may have handed it off first)
    assert behind.entered.wait(TIMEOUT)
    assert pool.check() == pytest.approx(min(LIMIT - HANDOFF, HANDOFF))
    assert (pool.threads, pool.retired, pool.retired_total, slow.reports) == (1, 1, 1, [])
    clock.advance(LIMIT - HANDOFF)
    pool.check()
    pool.check()
    assert slow.reports == [pytest.approx(LIMIT)]
    assert behind.reports == []  # it began later: handed off, not yet overdue
    slow.release.set()
    behind.release.set()
    assert slow.done.wait(TIMEOUT) and behind.done.wait(TIMEOUT)


def test_a_handed_off_job_goes_on_on_its_own_thread(
    handoff_pool: DeliveryPool, clock: ManualClock
) -> None:
    """A job whose call was handed off makes its next calls on the same thread, which ends with
    the job; a new call there is a new call (not stuck until it overruns in turn)."""
    pool = handoff_pool
    first, second = _Call(), _Call()

    def job(worker: Worker) -> None:
        first(worker)
        second(worker)

    assert pool.submit(job)
    assert first.entered.wait(TIMEOUT)
    clock.advance(LIMIT)
    pool.check()
    assert first.reports == [pytest.approx(LIMIT)]
    first.release.set()
    assert second.entered.wait(TIMEOUT)
    assert second.thread is first.thread
    assert pool.check() == pytest.approx(LIMIT)
    assert second.reports == []
    second.release.set()
    assert second.done.wait(TIMEOUT)
    second.thread.join(TIMEOUT)
    assert not second.thread.is_alive()
    assert (pool.threads, pool.retired) == (0, 0)


def test_shutdown_waits_for_a_handed_off_call_not_yet_stuck(clock: ManualClock) -> None:
    """Shutting down waits (bounded) on a handed-off thread whose call is not reported stuck,
    and it ends when its call returns."""
    made = DeliveryPool(1, LIMIT, handoff=HANDOFF, name="test-shut-slow", clock=clock)
    call = _Call()
    assert made.submit(call)
    assert call.entered.wait(TIMEOUT)
    clock.advance(HANDOFF)
    made.check()
    assert made.retired == 1
    threading.Timer(0.01, call.release.set).start()
    assert made.shutdown(TIMEOUT) == []
    assert not call.thread.is_alive()
