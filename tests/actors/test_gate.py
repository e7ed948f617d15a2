"""LoopGate: calls from any thread run on the loop's thread, in order, or fail with a code."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from praxo_actors import PraxoError
from praxo_actors.actors import LoopGate, serve_loop

WAIT = 10.0


class Served:
    """An event loop run by ``serve_loop`` on a thread of its own, and its gate."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.bursts = 0
        ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(ready,), name="test-gate")
        self.thread.start()
        assert ready.wait(WAIT)
        assert self.thread.ident is not None
        self.gate = LoopGate(self.loop, self.thread.ident, after_posted=self._burst)

    def _serve(self, ready: threading.Event) -> None:
        self.loop.call_soon(ready.set)
        serve_loop(self.loop)

    def _burst(self) -> None:
        self.bursts += 1

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(WAIT)
        assert not self.thread.is_alive()
        self.loop.close()


@pytest.fixture
def served() -> Iterator[Served]:
    """Run a loop on its own thread for the test; stop it and close it afterwards."""
    running = Served()
    yield running
    if not running.loop.is_closed():
        running.stop()


def test_posted_calls_run_on_the_loop_thread_in_order(served: Served) -> None:
    """Calls posted from another thread run on the loop's thread, in the order posted."""
    seen: list[tuple[int, int | None]] = []
    done = threading.Event()
    for i in range(100):
        assert served.gate.post(lambda i=i: seen.append((i, threading.get_ident())))
    assert served.gate.post(done.set)
    assert done.wait(WAIT)
    assert [i for i, _ in seen] == list(range(100))
    assert {ident for _, ident in seen} == {served.thread.ident}
    assert served.gate.call(lambda: served.bursts, timeout=WAIT) >= 1


def test_a_post_on_the_loop_thread_runs_at_once(served: Served) -> None:
    """On the loop's own thread, post runs the call before it returns."""

    def on_loop() -> list[str]:
        order: list[str] = []
        served.gate.post(order.append, "posted")
        order.append("after")
        return order

    assert served.gate.call(on_loop, timeout=WAIT) == ["posted", "after"]


def test_a_failing_posted_call_does_not_stop_the_others(served: Served) -> None:
    """An exception from a posted call is logged; the next calls still run."""
    done = threading.Event()

    def fail() -> None:
        raise ValueError("posted call failed")

    served.gate.post(fail)
    served.gate.post(done.set)
    assert done.wait(WAIT)


def test_call_returns_the_result_or_raises_the_exception(served: Served) -> None:
    """call() gives back the call's value, or raises what it raised."""
    assert served.gate.call(threading.get_ident, timeout=WAIT) == served.thread.ident

    def fail() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        served.gate.call(fail, timeout=WAIT)


def test_call_on_a_loop_that_does_not_run_times_out() -> None:
    """A loop that never runs the call: RUNTIME_TIMEOUT, within the timeout."""
    loop = asyncio.new_event_loop()
    try:
        gate = LoopGate(loop, thread_id=-1)
        with pytest.raises(PraxoError) as failed:
            gate.call(lambda: None, timeout=0.01)
        assert failed.value.code == "RUNTIME_TIMEOUT"
    finally:
        loop.close()


def test_a_closed_loop_refuses_posts_and_calls(served: Served) -> None:
    """After the loop closes, post returns False and call raises RUNTIME_STOPPED."""
    served.stop()
    assert served.gate.post(lambda: None) is False
    with pytest.raises(PraxoError) as failed:
        served.gate.call(lambda: None, timeout=WAIT)
    assert failed.value.code == "RUNTIME_STOPPED"
    served.gate.call_later(0.0, lambda: None).cancel()  # a timer on a closed loop: nothing


def test_a_timer_set_from_another_thread_fires_on_the_loop(served: Served) -> None:
    """call_later from another thread runs the call on the loop's thread."""
    fired: list[int | None] = []
    done = threading.Event()
    served.gate.call_later(0.0, lambda: (fired.append(threading.get_ident()), done.set()))
    assert done.wait(WAIT)
    assert fired == [served.thread.ident]


def test_a_timer_cancelled_before_it_reaches_the_loop_never_fires(served: Served) -> None:
    """Cancelled at once from another thread, the timer never runs, although due first."""
    fired: list[str] = []
    done = threading.Event()
    gate_closed = threading.Event()
    # Hold the loop so that the cancel surely comes before the timer is armed there.
    served.gate.post(gate_closed.wait, WAIT)
    served.gate.call_later(0.0, fired.append, "cancelled").cancel()
    gate_closed.set()
    served.gate.call_later(0.0, done.set)
    assert done.wait(WAIT)
    assert fired == []


def test_a_timer_cancelled_after_it_reached_the_loop_never_fires(served: Served) -> None:
    """Cancelled once armed on the loop, the timer does not run; a later one still does."""
    fired: list[str] = []
    done = threading.Event()
    # Due late enough that a loaded machine still cancels it first (the round trip below takes
    # under a millisecond idle; 10 ms was seen to pass under two busy test runs).
    handle = served.gate.call_later(0.25, fired.append, "cancelled")
    served.gate.call(lambda: None, timeout=WAIT)  # the timer is armed on the loop by now
    handle.cancel()
    # The loop runs timers in the order they are due: this one comes after the cancelled one.
    served.gate.call_later(0.3, done.set)
    assert done.wait(WAIT)
    assert fired == []


def test_a_closed_gate_runs_what_was_posted_and_refuses_the_rest(served: Served) -> None:
    """``close()`` on the loop runs the calls posted before it; later posts return False and
    a later ``call`` fails ``RUNTIME_STOPPED`` at once (none is left queued to a loop that
    may never run it)."""
    gate = served.gate
    hold = threading.Event()
    ran: list[int] = []
    assert gate.post(hold.wait, WAIT)  # the loop waits here while the posts below queue
    for i in range(50):
        assert gate.post(ran.append, i)
    closed = threading.Event()

    def close_on_loop() -> None:
        gate.close()
        closed.set()

    served.loop.call_soon_threadsafe(close_on_loop)
    hold.set()
    assert closed.wait(WAIT)
    assert ran == list(range(50))
    assert gate.closed
    assert gate.post(ran.append, 99) is False
    with pytest.raises(PraxoError) as info:
        gate.call(lambda: 1, timeout=WAIT)
    assert info.value.code == "RUNTIME_STOPPED"
    on_loop: list[bool] = []
    served.loop.call_soon_threadsafe(lambda: on_loop.append(gate.post(ran.append, 100)))
    assert gate.post(ran.append, 101) is False
    done = threading.Event()
    served.loop.call_soon_threadsafe(done.set)
    assert done.wait(WAIT)
    assert on_loop == [False] and ran == list(range(50))
