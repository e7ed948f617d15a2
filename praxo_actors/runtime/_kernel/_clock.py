"""The runtime's time: what deadlines, idle timeouts and the activation watchdog read and wait on.

By default that is real time: ``time.monotonic`` and the event loop's own timers. A
:class:`RuntimeClock` given to ``Runtime.start(clock=...)`` replaces both, so that a test moves
time by hand (:class:`praxo_actors.testing.ManualClock`) instead of sleeping. Either way the
runtime's timer callbacks run on its event loop thread.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from praxo_actors.actors._gate import OffLoopTimer

__all__ = ["LoopClock", "RuntimeClock", "Timer"]


class Timer(Protocol):
    """A pending timer: ``cancel()`` stops it from firing (harmless once it has fired)."""

    def cancel(self) -> None:
        """Stop the timer from firing."""
        ...


class RuntimeClock(Protocol):
    """A source of monotonic time and timers that ``Runtime.start(clock=...)`` takes.

    :class:`praxo_actors.testing.ManualClock` is one; the default is real time. The runtime
    calls ``now`` and ``monotonic_ns`` from any thread, and ``call_later`` from its loop thread.
    A ``callback`` may be called on any thread: the runtime's hand their work to its loop and
    wait (bounded) until the loop has done it, so they must not be called while that loop
    waits for the caller.
    """

    def now(self) -> float:
        """Return the current time in seconds (monotonic)."""
        ...

    def monotonic_ns(self) -> int:
        """Return the current time in nanoseconds, on the same scale as :meth:`now`."""
        ...

    def call_later(self, delay: float, callback: Callable[[], object]) -> Timer:
        """Call ``callback()`` once ``delay`` seconds have passed; return its timer."""
        ...


class LoopClock:
    """The runtime's readings and timers: real time on the loop, or a :class:`RuntimeClock`.

    Its readings and :meth:`call_later` work from any thread, and a timer's ``fn`` always runs
    on the loop thread, never inside the call (a timer already due runs in the loop's next
    turn, as ``loop.call_soon`` would run it).

    When a clock of the caller's fires a timer on another thread, that thread waits (at most
    ``wait`` seconds) until the loop has run it: so ``ManualClock.advance`` returns with the
    runtime done with what fell due (a deadline's run failed, an idle session passivated), and
    while the loop runs it the clock still reads its due time, as in a virtual-time loop.
    """

    __slots__ = ("_clock", "_loop", "_loop_thread_id", "_wait", "monotonic_ns", "now")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        loop_thread_id: int,
        clock: RuntimeClock | None = None,
        wait: float = 10.0,
    ) -> None:
        self._loop = loop
        self._loop_thread_id = loop_thread_id
        self._clock = clock
        self._wait = wait
        self.now: Callable[[], float] = time.monotonic if clock is None else clock.now
        self.monotonic_ns: Callable[[], int] = (
            time.monotonic_ns if clock is None else clock.monotonic_ns
        )

    def call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> Timer:
        """Call ``fn(*args)`` on the loop thread after ``delay`` seconds of this clock."""
        if threading.get_ident() != self._loop_thread_id:
            due = self.now() + delay
            # Armed from its due time: the hop to the loop must not delay it.
            return OffLoopTimer(
                self._loop, lambda fire: self.call_later(due - self.now(), fire), fn, args
            )
        if self._clock is None:
            return self._loop.call_later(delay, fn, *args)
        if delay <= 0:
            return self._loop.call_soon(fn, *args)
        return self._clock.call_later(delay, functools.partial(self._fire, fn, args))

    def _fire(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        if threading.get_ident() == self._loop_thread_id:
            fn(*args)  # the clock was moved on the loop thread itself (a coroutine of a test)
            return
        ran = threading.Event()

        def run() -> None:
            try:
                fn(*args)
            finally:
                ran.set()

        try:
            self._loop.call_soon_threadsafe(run)
        except RuntimeError:
            return  # the loop is closed: the runtime has stopped, nothing is left to time
        # Bounded: a loop that stops meanwhile never runs it.
        ran.wait(self._wait)
