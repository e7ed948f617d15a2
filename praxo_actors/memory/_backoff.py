"""When a store may try to reach its server again: capped exponential delays with jitter.

A store that lost its connection tries once at once (a dropped connection to a live server
comes back on the first attempt); after ``n`` failed attempts in a row the next waits
``min(maximum, initial * 2**(n-1))``, jittered down by up to half, so that many clients of one
restarting server spread their attempts instead of arriving together. Calls in the meantime do
not wait: they fail at once (the caller's error says when the next attempt is due).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

__all__ = ["Backoff"]


class Backoff:
    """Decide when the next connection attempt may start (one owner: the store, under its lock).

    Args:
        initial: Seconds before the attempt after the first failed one.
        maximum: The cap on any delay, in seconds.
        monotonic: Source of seconds (``time.monotonic``); injected by tests.
        jitter: Source of floats in ``[0, 1)`` (a private ``random.Random``); injected by tests.
    """

    def __init__(
        self,
        initial: float = 0.05,
        maximum: float = 2.0,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        jitter: Callable[[], float] | None = None,
    ) -> None:
        if not initial > 0 or not maximum >= initial:
            raise ValueError(f"need 0 < initial <= maximum, got {initial!r} and {maximum!r}")
        self.initial = initial
        self.maximum = maximum
        self.failures = 0
        self._monotonic = monotonic
        self._jitter = random.Random().random if jitter is None else jitter
        self._next = 0.0

    def remaining(self) -> float:
        """Return the seconds until an attempt may start (0.0: now)."""
        return max(0.0, self._next - self._monotonic())

    def failed(self) -> float:
        """Record a failed attempt; return the delay before the next one."""
        self.failures += 1
        # 2**n overflows a float past n = 1023; the cap is reached long before.
        full = min(self.maximum, self.initial * 2.0 ** min(self.failures - 1, 60))
        delay = full * (1.0 - 0.5 * self._jitter())
        self._next = self._monotonic() + delay
        return delay

    def succeeded(self) -> None:
        """Record a successful attempt: the next loss retries at once."""
        self.failures = 0
        self._next = 0.0
