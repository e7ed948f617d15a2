"""ManualClock: a clock that moves only when told to, firing what it passes, in order."""

from __future__ import annotations

import threading

import pytest

from praxo_actors import PraxoError
from praxo_actors.testing import ManualClock

WAIT = 10.0


def test_the_clock_reads_the_same_until_advanced() -> None:
    """Seconds, nanoseconds and a call read one time; advance moves it by exactly that."""
    clock = ManualClock(5.0)
    assert clock.now() == clock() == 5.0
    assert clock.monotonic_ns() == 5_000_000_000
    assert clock.advance(0.25) == 0
    assert clock.now() == 5.25
    assert clock.monotonic_ns() == 5_250_000_000
    assert repr(clock) == "ManualClock(5.25)"


def test_timers_fire_in_due_order_reading_their_due_time() -> None:
    """Timers passed by one advance fire in order of due time, each seeing its own time."""
    clock = ManualClock()
    seen: list[tuple[str, float]] = []
    clock.call_later(3, lambda: seen.append(("c", clock.now())))
    clock.call_later(1, lambda: seen.append(("a", clock.now())))
    clock.call_later(2, lambda: seen.append(("b", clock.now())))
    clock.call_later(2, lambda: seen.append(("b2", clock.now())))
    assert clock.advance(0.5) == 0
    assert seen == []
    assert clock.advance(2) == 3
    assert seen == [("a", 1.0), ("b", 2.0), ("b2", 2.0)]
    assert clock.now() == 2.5
    assert clock.advance(10) == 1
    assert seen[-1] == ("c", 3.0)


def test_a_cancelled_timer_never_fires() -> None:
    """cancel() before the advance keeps a timer from firing; cancelling again is harmless."""
    clock = ManualClock()
    fired: list[str] = []
    timer = clock.call_later(1, lambda: fired.append("cancelled"))
    clock.call_later(1, lambda: fired.append("kept"))
    timer.cancel()
    timer.cancel()
    assert "cancelled" in repr(timer)
    assert clock.advance(1) == 1
    assert fired == ["kept"]


def test_a_timer_set_by_a_callback_fires_in_the_same_advance_when_due() -> None:
    """A callback's own timer fires within the advance if it falls due within it."""
    clock = ManualClock()
    fired: list[float] = []

    def tick() -> None:
        fired.append(clock.now())
        if len(fired) < 10:
            clock.call_later(1, tick)

    clock.call_later(1, tick)
    assert clock.advance(3.5) == 3
    assert fired == [1.0, 2.0, 3.0]
    assert clock.advance(100) == 7
    assert fired[-1] == 10.0


def test_a_timer_already_due_fires_at_the_next_advance() -> None:
    """A delay of zero or less fires at the next advance, even advance(0), not at once."""
    clock = ManualClock(1.0)
    fired: list[float] = []
    clock.call_later(0, lambda: fired.append(clock.now()))
    clock.call_later(-5, lambda: fired.append(clock.now()))
    assert fired == []
    assert clock.advance(0) == 2
    assert fired == [1.0, 1.0]


def test_bad_inputs_are_refused_with_a_code() -> None:
    """Going back, non-finite or non-numeric times and non-callables: RUNTIME_INVALID_INPUT."""
    clock = ManualClock()
    bad = [
        lambda: clock.advance(-1),
        lambda: clock.advance(float("nan")),
        lambda: clock.advance(float("inf")),
        lambda: clock.advance(True),
        lambda: clock.call_later(float("nan"), lambda: None),
        lambda: clock.call_later(1, "not callable"),  # type: ignore[arg-type]
        lambda: ManualClock("0"),  # type: ignore[arg-type]
    ]
    for call in bad:
        with pytest.raises(PraxoError) as info:
            call()
        assert info.value.code == "RUNTIME_INVALID_INPUT"
    assert clock.now() == 0.0


def test_a_failing_callback_stops_the_clock_at_its_time() -> None:
    """A callback's exception propagates; the clock stays there and later timers wait."""
    clock = ManualClock()
    fired: list[float] = []

    def boom() -> None:
        raise ValueError("boom")

    clock.call_later(1, boom)
    clock.call_later(2, lambda: fired.append(clock.now()))
    with pytest.raises(ValueError, match="boom"):
        clock.advance(5)
    assert clock.now() == 1.0
    assert fired == []
    assert clock.advance(1) == 1
    assert fired == [2.0]
    assert clock.now() == 2.0


def test_advances_from_several_threads_add_up() -> None:
    """Concurrent advances are not lost: four threads of 1,000 steps each move it 4 s."""
    clock = ManualClock()
    fired: list[int] = []
    for k in range(1, 5):
        clock.call_later(k, lambda k=k: fired.append(k))  # type: ignore[misc]
    go = threading.Barrier(4, timeout=WAIT)

    def advance() -> None:
        go.wait()
        for _ in range(1000):
            clock.advance(0.001)

    threads = [threading.Thread(target=advance) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive()
    assert clock.monotonic_ns() == 4_000_000_000
    assert sorted(fired) == [1, 2, 3, 4]  # each once
