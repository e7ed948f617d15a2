"""``rate_limited``: one request budget shared by every session, thread and loop using a model.

The budget is a concurrency limit and a request rate. Its state is guarded by a thread lock
and bound to no event loop: an ``asyncio.Semaphore`` belongs to the loop it was first used
on and fails on another, while a runtime's sessions, a service's handlers and a script's
``asyncio.run`` may all share one model. A waiting task is woken on its own loop
(``call_soon_threadsafe``), a waiting thread through its own ``threading.Event``.
"""

from __future__ import annotations

import asyncio
import collections
import math
import threading
from typing import Any

import msgspec

from praxo_actors.agent import Model
from praxo_actors.models import ModelError, Request, Response
from praxo_actors.providers._calls import acall, call, check_model, check_seconds, is_async
from praxo_actors.providers._clock import Clock, SystemClock

__all__ = ["RateLimit", "RateLimitStatistics", "RateLimitedModel", "rate_limited"]


class RateLimitStatistics(msgspec.Struct, frozen=True):
    """A budget's counters: calls running, calls waiting for a slot, calls started."""

    in_flight: int
    waiting: int
    started: int


class _Waiter:
    """A call waiting for a slot: a task (a future on its loop) or a thread (an event)."""

    __slots__ = ("event", "future", "granted", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop | None) -> None:
        self.loop = loop
        self.future: asyncio.Future[None] | None = loop.create_future() if loop else None
        self.event = None if loop else threading.Event()
        self.granted = False

    def wake(self) -> bool:
        """Tell the waiter its slot is free; False when its loop is gone."""
        if self.loop is None:
            assert self.event is not None
            self.event.set()
            return True
        try:
            self.loop.call_soon_threadsafe(_resolve, self.future)
        except RuntimeError:  # its loop is closed: the waiter cannot run again
            return False
        return True


def _resolve(future: asyncio.Future[None] | None) -> None:
    if future is not None and not future.done():
        future.set_result(None)


class RateLimit:
    """A shared budget: at most ``max_concurrency`` calls at once, ``requests_per_second`` starts.

    Starts are spaced by the generic cell rate algorithm: up to ``burst`` at once, then one
    every ``1 / requests_per_second`` seconds. Waiting for a slot is first come, first served;
    a call takes its slot before its start time, so a waiting call spends no rate.
    """

    def __init__(
        self,
        requests_per_second: float | None,
        max_concurrency: int | None,
        burst: int,
        clock: Clock,
    ) -> None:
        self.requests_per_second = requests_per_second
        self.max_concurrency = max_concurrency
        self.burst = burst
        self.clock = clock
        self._interval = 1.0 / requests_per_second if requests_per_second else 0.0
        self._lock = threading.Lock()
        self._in_flight = 0
        self._started = 0
        self._waiters: collections.deque[_Waiter] = collections.deque()
        self._next_start: float | None = None  # the theoretical arrival time

    def statistics(self) -> RateLimitStatistics:
        """Return the budget's counters now."""
        with self._lock:
            return RateLimitStatistics(self._in_flight, len(self._waiters), self._started)

    async def acquire(self) -> None:
        """Wait (suspending the task) for a slot and then for the call's start time."""
        waiter = self._claim(asyncio.get_running_loop())
        if waiter is not None:
            assert waiter.future is not None
            try:
                await waiter.future
            except asyncio.CancelledError:
                self._abandon(waiter)
                raise
        delay = self._reserve()
        if delay > 0:
            try:
                await self.clock.asleep(delay)
            except BaseException:
                self.release()
                raise

    def acquire_sync(self) -> None:
        """Wait (blocking the thread) for a slot and then for the call's start time."""
        waiter = self._claim(None)
        if waiter is not None:
            assert waiter.event is not None
            waiter.event.wait()
        delay = self._reserve()
        if delay > 0:
            try:
                self.clock.sleep(delay)
            except BaseException:
                self.release()
                raise

    def release(self) -> None:
        """Free a slot: hand it to the first waiter still able to take it."""
        with self._lock:
            while self._waiters:
                waiter = self._waiters.popleft()
                waiter.granted = True
                if waiter.wake():
                    return
            self._in_flight -= 1

    def _claim(self, loop: asyncio.AbstractEventLoop | None) -> _Waiter | None:
        with self._lock:
            limit = self.max_concurrency
            if limit is None or (self._in_flight < limit and not self._waiters):
                self._in_flight += 1
                return None
            waiter = _Waiter(loop)
            self._waiters.append(waiter)
            return waiter

    def _abandon(self, waiter: _Waiter) -> None:
        """A waiting task was cancelled: leave the queue, or pass on the slot it was given."""
        with self._lock:
            if not waiter.granted:
                self._waiters.remove(waiter)
                return
        self.release()

    def _reserve(self) -> float:
        """Take the next start time; return the seconds to wait for it."""
        with self._lock:
            self._started += 1
            if not self._interval:
                return 0.0
            now = self.clock.monotonic()
            due = self._next_start if self._next_start is not None else now
            start = max(now, due - (self.burst - 1) * self._interval)
            self._next_start = max(due, start) + self._interval
            return start - now

    def __repr__(self) -> str:
        return (
            f"RateLimit(requests_per_second={self.requests_per_second}, "
            f"max_concurrency={self.max_concurrency}, burst={self.burst})"
        )


class RateLimitedModel:
    """A model whose calls share one :class:`RateLimit` (``limit``); ``async`` when ``model`` is."""

    __slots__ = ("limit", "model")

    def __init__(self, model: Model, limit: RateLimit) -> None:
        self.model = model
        self.limit = limit

    def __call__(self, request: Request) -> Response | ModelError | Any:
        """Wait for the budget, call the model, free the slot."""
        self.limit.acquire_sync()
        try:
            return call(self.model, request)
        finally:
            self.limit.release()

    def __repr__(self) -> str:
        return f"rate_limited({self.model!r}, {self.limit!r})"


class _AsyncRateLimitedModel(RateLimitedModel):
    __slots__ = ()

    async def __call__(self, request: Request) -> Response | ModelError | Any:
        """Wait for the budget, call the model, free the slot."""
        await self.limit.acquire()
        try:
            return await acall(self.model, request)
        finally:
            self.limit.release()


def rate_limited(
    model: Model,
    requests_per_second: float | None,
    max_concurrency: int | None,
    *,
    burst: int = 1,
    clock: Clock | None = None,
) -> RateLimitedModel:
    """Return ``model`` sharing one budget across every session, thread and loop that calls it.

    The result is ``async def`` when ``model`` (or a leaf of a ``fallback_model``) is, so the
    runtime runs it on its loop; a sync model stays sync and waits by blocking its thread.

    Args:
        model: The model to limit.
        requests_per_second: Call starts per second at most (None: no rate limit).
        max_concurrency: Calls in flight at most (None: no concurrency limit).
        burst: Calls that may start at once before the rate spaces them.
        clock: Where the wrapper reads the time and waits (the system's by default).

    Raises:
        TypeError: ``model`` not callable, or a limit of the wrong type.
        ValueError: A limit that is not positive, or both limits None.
    """
    check_model("rate_limited", model)
    if requests_per_second is not None:
        requests_per_second = check_seconds(
            "rate_limited", "requests_per_second", requests_per_second, positive=True
        )
    for name, value in (("max_concurrency", max_concurrency), ("burst", burst)):
        if value is None and name == "max_concurrency":
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"rate_limited: {name} must be an int, not {type(value).__name__}")
        if value < 1:
            raise ValueError(f"rate_limited: {name} must be at least 1, got {value}")
    if requests_per_second is None and max_concurrency is None:
        raise ValueError("rate_limited: give requests_per_second, max_concurrency or both")
    assert requests_per_second is None or math.isfinite(requests_per_second)
    limit = RateLimit(requests_per_second, max_concurrency, burst, clock or SystemClock())
    kind = _AsyncRateLimitedModel if is_async(model) else RateLimitedModel
    return kind(model, limit)
