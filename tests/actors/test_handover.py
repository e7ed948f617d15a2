"""Every hand-over between threads in the executor holds under a forced interleaving.

Each test stops one thread at the racy point of a hand-over (a hooked lock or loop method that
waits on an event), lets the other thread do its part, then lets the first go on: the order
that a busy machine produces once in thousands of runs, produced every time. Waits are bounded.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from praxo_actors.actors import LoopGate, LoopScheduler, MNActor, MNFuture, Scheduler, serve_loop
from praxo_actors.runtime._kernel._clock import LoopClock

WAIT = 10.0
# How long a test waits for work that must not happen before it looks (a lost wakeup shows as
# this wait running out).
LOST = 3.0


class Served:
    """An event loop served on a thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(ready,), name="test-handover")
        self.thread.start()
        assert ready.wait(WAIT)
        assert self.thread.ident is not None
        self.thread_id = self.thread.ident

    def _serve(self, ready: threading.Event) -> None:
        self.loop.call_soon(ready.set)
        serve_loop(self.loop)

    def flush_timers(self) -> None:
        """Return once every timer due by now has fired (a later one fires after them)."""
        flushed = threading.Event()
        self.loop.call_soon_threadsafe(self.loop.call_later, 0.001, flushed.set)
        assert flushed.wait(WAIT)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(WAIT)
        assert not self.thread.is_alive()
        self.loop.close()


@pytest.fixture
def served() -> Iterator[Served]:
    """A loop on its own thread, stopped and closed after the test."""
    running = Served()
    yield running
    running.stop()


class HookedLock:
    """A lock that tells when a given thread starts to wait for it."""

    def __init__(self, watched: int) -> None:
        self._lock = threading.Lock()
        self._watched = watched
        self.watched_waits = threading.Event()

    def __enter__(self) -> HookedLock:
        if threading.get_ident() == self._watched:
            self.watched_waits.set()
        self._lock.acquire()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._lock.release()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        self._lock.release()


class Task:
    """A ready-queue entry that notes that it ran."""

    def __init__(self) -> None:
        self.ran = threading.Event()

    def _run(self) -> None:
        self.ran.set()


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


class RaceAtLock:
    """A future's lock: the first time thread ``holder`` holds it, ``other`` starts on a
    thread of its own and runs until it waits for this lock; then the holder goes on."""

    def __init__(self, other: Callable[[], object]) -> None:
        self._lock = threading.Lock()
        self._other = threading.Thread(target=other)
        self._other_waits = threading.Event()
        self.holder: int | None = None

    def __enter__(self) -> None:
        me = threading.get_ident()
        if me == self._other.ident:
            self._other_waits.set()
        self._lock.acquire()
        if me == self.holder and self._other.ident is None:
            self._other.start()
            assert self._other_waits.wait(WAIT)

    def __exit__(self, *_exc: object) -> None:
        self._lock.release()

    def join(self) -> None:
        self._other.join(WAIT)
        assert not self._other.is_alive()


def test_a_future_set_while_a_thread_registers_its_wait_wakes_it() -> None:
    """``get()`` on one thread, ``set()`` on another arriving while the getter holds the
    future's lock to register its wait: the getter wakes with the value."""
    future: MNFuture[int] = MNFuture()
    race = RaceAtLock(lambda: future.set(7))
    future._lock = race  # type: ignore[assignment]
    got: list[int] = []

    def get() -> None:
        race.holder = threading.get_ident()
        got.append(future.get(timeout=WAIT))

    getter = threading.Thread(target=get)
    getter.start()
    getter.join(WAIT)
    race.join()
    assert got == [7]


def test_a_future_set_while_a_task_registers_its_await_wakes_it(served: Served) -> None:
    """``await`` on the loop, ``set()`` on another thread arriving while the task holds the
    future's lock to register its wake-up: the task resumes with the value."""
    future: MNFuture[int] = MNFuture()
    race = RaceAtLock(lambda: future.set(9))
    race.holder = served.thread_id
    future._lock = race  # type: ignore[assignment]

    async def wait() -> int:
        return await future

    result = asyncio.run_coroutine_threadsafe(wait(), served.loop).result(WAIT)
    race.join()
    assert result == 9


def test_a_callback_added_while_the_future_is_set_runs_once() -> None:
    """``add_done_callback`` racing ``set()`` on the future's lock: the callback runs once."""
    future: MNFuture[int] = MNFuture()
    race = RaceAtLock(lambda: future.set(3))
    future._lock = race  # type: ignore[assignment]
    calls: list[int] = []
    race.holder = threading.get_ident()
    future.add_done_callback(lambda f: calls.append(f.get(timeout=0)))
    race.join()
    assert calls == [3]


def test_puts_from_many_threads_to_an_idle_scheduler_wake_its_workers() -> None:
    """Threads tell actors of a two-thread scheduler whose workers idle and linger between
    bursts: every message is handled."""

    class Count(MNActor):
        def __init__(self, done: threading.Semaphore) -> None:
            super().__init__()
            self.done = done

        def on_receive(self, message: object) -> None:
            self.done.release()

    done = threading.Semaphore(0)
    with Scheduler(2, name="test-handover-threads", batch=1) as sched:
        refs = [Count.start(done, actor_scheduler=sched) for _ in range(20)]
        try:
            for burst in range(20):
                start = threading.Barrier(3)

                def tell(k: int, burst: int = burst, start: threading.Barrier = start) -> None:
                    start.wait(WAIT)
                    for i in range(25):
                        refs[(i + k + burst) % len(refs)].tell(i)

                threads = [threading.Thread(target=tell, args=(k,)) for k in range(3)]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join(WAIT)
                assert all(done.acquire(timeout=WAIT) for _ in range(75))
        finally:
            for ref in refs:
                ref.stop(timeout=WAIT)


class ArmedLock(HookedLock):
    """A scheduler lock that runs ``hook`` once, the next time the watched thread asks for it
    after :meth:`arm` (before it takes the lock)."""

    def __init__(self, watched: int) -> None:
        super().__init__(watched)
        self.hook: Callable[[], None] | None = None

    def arm(self, hook: Callable[[], None]) -> None:
        self.hook = hook

    def __enter__(self) -> HookedLock:
        hook = self.hook
        if hook is not None and threading.get_ident() == self._watched:
            self.hook = None
            hook()
        return super().__enter__()


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


def test_a_stop_event_set_between_a_waiters_check_and_its_wait_wakes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An actor's stop event: ``set()`` lands after ``wait()`` found it clear and made its
    condition, before it waits on it: the wait returns True at once."""
    from praxo_actors.actors import _mn

    class Idle(MNActor):
        pass

    with Scheduler(1, name="test-stop-event") as sched:
        ref = Idle.start(actor_scheduler=sched)
        event = ref.actor_stopped
        waiter = threading.get_ident()
        real = _mn._event_lock

        class SetAfterCheck:
            done = False

            def __enter__(self) -> None:
                real.acquire()

            def __exit__(self, *_exc: object) -> None:
                real.release()
                if threading.get_ident() == waiter and not self.done:
                    self.done = True
                    setter = threading.Thread(target=event.set)
                    setter.start()
                    setter.join(WAIT)

        monkeypatch.setattr(_mn, "_event_lock", SetAfterCheck())
        assert event.wait(LOST)
        monkeypatch.setattr(_mn, "_event_lock", real)
        event.clear()
        ref.stop(timeout=WAIT)


def test_calls_submitted_to_the_io_pool_from_many_threads_all_report() -> None:
    """Four threads submit 400 calls to a pool of two threads, between idle spells: every
    outcome is reported once."""
    from praxo_actors.actors import IOPool

    pool = IOPool(2, name="test-handover-io")
    outcomes = threading.Semaphore(0)
    values: list[int] = []
    lock = threading.Lock()

    def done(ok: bool, value: Any) -> None:
        assert ok
        with lock:
            values.append(value)
        outcomes.release()

    try:
        for _ in range(4):
            start = threading.Barrier(4)

            def submit(k: int, start: threading.Barrier = start) -> None:
                start.wait(WAIT)
                for i in range(25):
                    pool.submit(lambda n: n, (k * 100 + i,), done)

            threads = [threading.Thread(target=submit, args=(k,)) for k in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(WAIT)
            assert all(outcomes.acquire(timeout=WAIT) for _ in range(100))
    finally:
        assert pool.shutdown(WAIT) == []
    assert sorted(values) == sorted(
        k * 100 + i for k in range(4) for i in range(25) for _ in range(4)
    )
