"""Clocks for restart intensity: the monotonic clock, or a manual one for tests."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

from supervisors._errors import INVALID_SPEC, SupervisorError

__all__ = ["Clock", "ManualClock"]

Clock = Callable[[], float]
"""A callable returning the current time in seconds (``time.monotonic`` by default)."""


class ManualClock:
    """A clock that moves only when told to, so restart windows can be tested exactly.

    Call the instance to read the time; ``advance`` moves it forward. Thread-safe.

    Args:
        start: The initial reading, in seconds.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._lock = threading.Lock()
        self._now = float(start)

    def __call__(self) -> float:
        """Return the current reading."""
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock forward.

        Raises:
            SupervisorError: ``SUPERVISOR_INVALID_SPEC`` if ``seconds`` is negative or not
                finite (a clock never goes back).
        """
        if not math.isfinite(seconds) or seconds < 0:
            raise SupervisorError(INVALID_SPEC, f"cannot advance a clock by {seconds!r} seconds")
        with self._lock:
            self._now += seconds

    def __repr__(self) -> str:
        return f"ManualClock({self():g})"
