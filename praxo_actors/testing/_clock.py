"""A clock that tests move by hand: the runtime's timers fire when it passes them."""

from __future__ import annotations

import heapq
import itertools
import math
import threading
from collections.abc import Callable

from praxo_actors._errors import PraxoError
from praxo_actors.codes import RUNTIME_INVALID_INPUT

__all__ = ["ManualClock", "ManualTimer"]


class ManualTimer:
    """A timer of a :class:`ManualClock`: ``cancel()`` keeps it from firing."""

    __slots__ = ("callback", "cancelled", "due_ns")

    def __init__(self, due_ns: int, callback: Callable[[], object]) -> None:
        self.due_ns = due_ns
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        """Keep the timer from firing (harmless once it has fired)."""
        self.cancelled = True

    def __repr__(self) -> str:
        state = "cancelled" if self.cancelled else "pending"
        return f"<ManualTimer at {self.due_ns / 1e9:g} s {state}>"


class ManualClock:
    """A monotonic clock that moves only when told to, firing each timer it passes.

    Give it to ``Runtime.start(clock=...)`` (or ``astart`` / ``open``): the runtime's run
    deadlines, idle passivation and activation timeout then happen when a test calls
    :meth:`advance`, never on their own, so nothing sleeps or polls real time. Like the clocks
    ``supervisors`` takes, calling it reads it (``clock()`` is ``clock.now()``), so one clock can
    drive a supervisor's restart window too. Thread-safe.

    Args:
        start: The first reading, in seconds.

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` for a start that is not a finite number.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._lock = threading.Lock()
        self._ns = _to_ns(start, "start")
        self._goal = self._ns  # where the advances so far are taking the clock
        self._timers: list[tuple[int, int, ManualTimer]] = []
        self._order = itertools.count()  # timers due at the same time fire in the order set

    def __call__(self) -> float:
        """Return the current reading in seconds (the shape of a ``supervisors`` clock)."""
        return self.now()

    def now(self) -> float:
        """Return the current reading in seconds."""
        with self._lock:
            return self._ns / 1e9

    def monotonic_ns(self) -> int:
        """Return the current reading in nanoseconds."""
        with self._lock:
            return self._ns

    def call_later(self, delay: float, callback: Callable[[], object]) -> ManualTimer:
        """Call ``callback()`` when an :meth:`advance` reaches ``delay`` seconds from now.

        A timer already due (``delay <= 0``) fires at the next :meth:`advance`, even
        ``advance(0)``. The callback runs on the thread that advances the clock.

        Raises:
            PraxoError: ``RUNTIME_INVALID_INPUT`` for a delay that is not a finite number or
                a callback that is not callable.
        """
        if not callable(callback):
            raise PraxoError(RUNTIME_INVALID_INPUT, f"not callable: {callback!r}")
        delay_ns = max(0, _to_ns(delay, "delay"))
        with self._lock:
            timer = ManualTimer(self._ns + delay_ns, callback)
            heapq.heappush(self._timers, (timer.due_ns, next(self._order), timer))
        return timer

    def advance(self, seconds: float) -> int:
        """Move the clock forward, calling each timer it passes in order of due time.

        While a timer's callback runs, the clock reads that timer's due time (unless another
        thread moves it meanwhile); timers its callbacks set that fall due within the advance
        fire too. Return how many fired.

        Raises:
            PraxoError: ``RUNTIME_INVALID_INPUT`` for a negative or non-finite ``seconds`` (a
                clock never goes back).
            Exception: Whatever a callback raises; the clock then stays at that callback's
                time and the timers after it wait for the next advance.
        """
        step = _to_ns(seconds, "seconds")
        if step < 0:
            raise PraxoError(RUNTIME_INVALID_INPUT, f"cannot move a clock back ({seconds!r} s)")
        with self._lock:
            self._goal += step
        fired = 0
        while True:
            with self._lock:
                timer = self._next_due()
                if timer is None:
                    self._ns = max(self._ns, self._goal)
                    return fired
                self._ns = max(self._ns, timer.due_ns)
            try:
                timer.callback()
            except BaseException:
                with self._lock:
                    self._goal = self._ns
                raise
            fired += 1

    def _next_due(self) -> ManualTimer | None:
        timers = self._timers
        while timers:
            due, _, timer = timers[0]
            if timer.cancelled:
                heapq.heappop(timers)
                continue
            if due > self._goal:
                return None
            heapq.heappop(timers)
            return timer
        return None

    def __repr__(self) -> str:
        return f"ManualClock({self.now():g})"


def _to_ns(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PraxoError(
            RUNTIME_INVALID_INPUT, f"{name} must be a finite number of seconds, not {value!r}"
        )
    return round(value * 1_000_000_000)
