"""The time the model wrappers read and wait on: the system's, or a test's."""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

__all__ = ["Clock", "SystemClock"]


class Clock(Protocol):
    """Where :func:`rate_limited` and :func:`retrying` read the time and wait.

    ``sleep`` blocks the calling thread (a sync model's); ``asleep`` suspends the calling task
    (an ``async`` model's), on whichever loop it runs. A test passes a clock whose waits move
    virtual time at once, so nothing sleeps to synchronise.
    """

    def monotonic(self) -> float:
        """Return the current time in seconds (monotonic)."""
        ...

    def sleep(self, seconds: float) -> None:
        """Block the calling thread for ``seconds``."""
        ...

    async def asleep(self, seconds: float) -> None:
        """Suspend the calling task for ``seconds``."""
        ...


class SystemClock:
    """The real clock: ``time.monotonic``, ``time.sleep`` and ``asyncio.sleep``."""

    def monotonic(self) -> float:
        """Return ``time.monotonic()``."""
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        """Block for ``seconds``."""
        time.sleep(seconds)

    async def asleep(self, seconds: float) -> None:
        """Suspend the calling task for ``seconds``."""
        await asyncio.sleep(seconds)

    def __repr__(self) -> str:
        return "SystemClock()"
