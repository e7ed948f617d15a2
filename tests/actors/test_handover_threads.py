"""The threads' hand-overs hold under forced interleavings: futures set while waited on,
awaited or given a callback, an idle scheduler's workers woken, a stop event, the I/O pool."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from _handover import LOST, WAIT, RaceAtLock, Served

from praxo_actors.actors import MNActor, MNFuture, Scheduler


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
