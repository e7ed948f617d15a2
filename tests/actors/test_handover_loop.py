"""The loop's hand-overs hold under forced interleavings: a put waking the loop's drain, a turn
ending as a put lands, timers armed and cancelled across threads, a burst of posted calls."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from _handover import LOST, WAIT, ArmedLock, HookedLock, Served, Task

from praxo_actors.actors import LoopGate, LoopScheduler, MNActor
from praxo_actors.runtime._kernel._clock import LoopClock


def test_a_drain_that_starts_before_the_putter_stores_its_handle_still_reschedules(
    served: Served,
) -> None:
    """The drain callback runs before the putting thread has stored its handle, runs out of
    turns, and still schedules a drain for the actor left ready."""
    sched = LoopScheduler(served.loop, served.thread_id, name="test-late-store", turns=1)
    lock = HookedLock(served.thread_id)
    sched._lock = lock  # type: ignore[assignment]
    real = served.loop.call_soon_threadsafe

    def runnable_then_wait(callback: Callable[..., Any], *args: Any) -> asyncio.Handle:
        handle = real(callback, *args)
        del served.loop.call_soon_threadsafe  # hook only the first
        # The handle is runnable: let the drain start and reach the lock before it is stored.
        assert lock.watched_waits.wait(WAIT)
        return handle

    served.loop.call_soon_threadsafe = runnable_then_wait  # type: ignore[method-assign]
    first, second = Task(), Task()
    with lock:
        sched._ready_locked(first)
        sched._ready_locked(second)
    assert first.ran.wait(WAIT)
    assert second.ran.wait(LOST), "the loop slept with an actor ready (a lost wakeup)"


def test_a_thread_putting_while_the_loop_drains_loses_no_actor(served: Served) -> None:
    """Four threads tell 50 actors 2,000 messages while one-turn drains run: all are handled."""

    class Count(MNActor):
        def __init__(self, done: threading.Semaphore) -> None:
            super().__init__()
            self.done = done

        def on_receive(self, message: object) -> None:
            self.done.release()

    sched = LoopScheduler(served.loop, served.thread_id, name="test-stress", turns=1, batch=1)
    done = threading.Semaphore(0)
    refs = [Count.start(done, actor_scheduler=sched) for _ in range(50)]
    start = threading.Barrier(4)

    def tell(k: int) -> None:
        start.wait(WAIT)
        for i in range(500):
            refs[(i * 7 + k) % len(refs)].tell(i)

    threads = [threading.Thread(target=tell, args=(k,)) for k in range(4)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)
        assert all(done.acquire(timeout=WAIT) for _ in range(2000))
    finally:
        for ref in refs:
            ref.stop(timeout=WAIT)
        sched.shutdown()


def test_the_state_check_reports_a_ready_actor_with_no_drain_due(served: Served) -> None:
    """A drain that ends with an actor ready and only a stale handle recorded is reported."""
    from praxo_actors.actors import _checks

    sched = LoopScheduler(served.loop, served.thread_id, name="test-check", turns=1)
    tasks = [Task(), Task()]

    def broken() -> None:
        stale = served.loop.call_soon(lambda: None)
        stale.cancel()
        with sched._lock:
            sched._ready.extend(tasks)
            sched._scheduled, sched._pending = True, stale
        sched._drain(eager=True)

    was = _checks.enabled()
    _checks.enable()
    try:
        _checks.take_violations()
        LoopGate(served.loop, served.thread_id).call(broken, timeout=WAIT)
        found = _checks.take_violations()
    finally:
        _checks.enable(was)
    assert len(found) == 1 and "lost wakeup" in found[0]


def test_a_timer_cancelled_while_the_loop_arms_it_never_fires(served: Served) -> None:
    """``LoopGate.call_later`` from another thread: a cancel landing after the arming checked
    the flag, before it stored the loop's timer, still stops it."""
    fired = threading.Event()
    arming, cancelled = threading.Event(), threading.Event()
    real = served.loop.call_later

    def arm_slowly(delay: float, fn: Callable[..., Any], *args: Any) -> asyncio.TimerHandle:
        del served.loop.call_later
        arming.set()
        assert cancelled.wait(WAIT)
        return real(delay, fn, *args)

    served.loop.call_later = arm_slowly  # type: ignore[method-assign]
    timer = LoopGate(served.loop, served.thread_id).call_later(0.0, fired.set)
    assert arming.wait(WAIT)
    timer.cancel()
    cancelled.set()
    served.flush_timers()
    assert not fired.is_set()


def test_a_runtime_timer_cancelled_while_the_loop_arms_it_never_fires(served: Served) -> None:
    """The runtime clock's timers set off the loop hold the same hand-over."""
    fired = threading.Event()
    arming, cancelled = threading.Event(), threading.Event()
    real = served.loop.call_later

    def arm_slowly(delay: float, fn: Callable[..., Any], *args: Any) -> asyncio.TimerHandle:
        del served.loop.call_later
        arming.set()
        assert cancelled.wait(WAIT)
        return real(delay, fn, *args)

    served.loop.call_later = arm_slowly  # type: ignore[method-assign]
    timer = LoopClock(served.loop, served.thread_id).call_later(0.0, fired.set)
    assert arming.wait(WAIT)
    timer.cancel()
    cancelled.set()
    served.flush_timers()
    assert not fired.is_set()


class Stop(BaseException):
    """A BaseException that asyncio reports and goes on (not KeyboardInterrupt/SystemExit)."""


def test_calls_posted_after_one_that_raises_a_base_exception_still_run(served: Served) -> None:
    """A burst of posted calls: the one raising a BaseException does not drop the rest."""
    gate = LoopGate(served.loop, served.thread_id)
    ran: list[int] = []
    done = threading.Event()
    hold, held = threading.Event(), threading.Event()

    def block() -> None:
        held.set()
        assert hold.wait(WAIT)

    def stop() -> None:
        raise Stop

    served.loop.set_exception_handler(lambda _loop, _context: None)
    served.loop.call_soon_threadsafe(block)
    assert held.wait(WAIT)
    # The loop is held: the three posts below are one burst.
    gate.post(stop)
    gate.post(ran.append, 1)
    gate.post(done.set)
    hold.set()
    assert done.wait(LOST), "the calls posted after the raising one were dropped"
    assert ran == [1]


def test_a_put_landing_as_a_turn_ends_on_an_empty_mailbox_is_handled(served: Served) -> None:
    """A put from another thread after the turn found the mailbox empty, before it marks the
    actor idle: the actor goes back on the ready queue and handles it."""
    sched = LoopScheduler(served.loop, served.thread_id, name="test-end-turn")
    lock = ArmedLock(served.thread_id)
    sched._lock = lock  # type: ignore[assignment]
    seen: list[object] = []
    second = threading.Event()

    class Arming(MNActor):
        def on_receive(self, message: object) -> None:
            seen.append(message)
            if message == "first":
                lock.arm(put_second)  # the next lock this thread takes: the end of this turn
            else:
                second.set()

    ref = Arming.start(actor_scheduler=sched)

    def put_second() -> None:
        putter = threading.Thread(target=ref.tell, args=("second",))
        putter.start()
        putter.join(WAIT)
        assert not putter.is_alive()

    try:
        ref.tell("first")
        assert second.wait(LOST), "a put landing as the turn ended was never handled"
        assert seen == ["first", "second"]
    finally:
        ref.stop(timeout=WAIT)
        sched.shutdown()
