"""One subscription: its filter, its bounded buffer, its counters and the drain that delivers.

The bus thread offers events; one delivery thread at a time drains the buffer, one call at a
time, oldest first. The subscription's lock guards only its buffer and counters, between those
two and :meth:`Subscription.statistics`; it is never held during a call to the subscriber. A
subscription joins and leaves the bus only through the subscription table's owner (see
:mod:`~praxo_actors.runtime._events._table`), which ends it (:meth:`Subscription._end`) when it
removes it.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

import msgspec
import pykka

from praxo_actors._log import get_logger
from praxo_actors.models import Event
from praxo_actors.runtime._events._delivery import DeliveryPool, Worker
from praxo_actors.runtime._events._matching import EventFilter
from praxo_actors.runtime._kernel._waits import check_timeout

__all__ = ["Subscription", "SubscriptionStatistics"]

logger = get_logger("praxo_actors.events")

_event_decoder = msgspec.msgpack.Decoder(Event)
_ids = itertools.count(1)


class _Bus(Protocol):
    def remove(self, sub: Subscription) -> bool: ...

    def remove_soon(self, sub: Subscription) -> None: ...


class SubscriptionStatistics(msgspec.Struct, frozen=True):
    """Counters of one subscription."""

    delivered: int
    dropped: int
    buffered: int
    active: bool
    stuck: bool = False
    """Whether a call to the subscriber has overrun ``subscriber_timeout`` and not returned."""


class Subscription:
    """One subscriber's filter, bounded buffer and counters; ``unsubscribe()`` ends it."""

    def __init__(
        self,
        bus: _Bus,
        target: Callable[[Event], Any] | pykka.ActorRef[Any],
        pattern: str,
        session_id: str | None,
        buffer: int,
    ) -> None:
        self.id = next(_ids)
        self.pattern = pattern
        self.session_id = session_id
        self._filter = EventFilter(pattern, session_id)
        self._bus = bus
        self._target = target
        self._is_actor = isinstance(target, pykka.ActorRef)
        self._maxlen = buffer
        self._buffer: deque[bytes] = deque()
        self._lock = threading.Lock()
        self._draining = False
        self._active = True
        self._idle = threading.Event()
        self._idle.set()
        self._calling: Worker | None = None  # the worker draining the buffer, if any
        self.delivered = 0
        self.dropped = 0
        self.on_close: Callable[[], None] | None = None

    def matches(self, event: Event) -> bool:
        """Return whether ``event`` passes this subscription's pattern and session filter."""
        return self._filter(event)

    def unsubscribe(self) -> None:
        """Stop delivery; events still buffered are discarded. Idempotent.

        Once it returns, no event published after it is delivered; a call to the subscriber
        already under way (or beginning, with an event published before) may still finish.
        """
        if self._bus.remove(self):
            self._closed()

    def _unsubscribe_soon(self) -> None:
        """Ask for the subscription's removal without waiting (a finalizer's way: the collector
        may run it on any thread, the table owner's included); its hook does not run."""
        self._bus.remove_soon(self)

    def _closed(self) -> None:
        """Run the ``on_close`` hook, once (the caller removed the subscription, or closed)."""
        hook, self.on_close = self.on_close, None
        if hook is not None:
            hook()

    @property
    def active(self) -> bool:
        """Whether the subscription still receives events."""
        return self._active

    def statistics(self) -> SubscriptionStatistics:
        """Return the subscription's counters (frozen once it has ended)."""
        with self._lock:
            return SubscriptionStatistics(
                delivered=self.delivered,
                dropped=self.dropped,
                buffered=len(self._buffer),
                active=self._active,
                stuck=self.stuck,
            )

    @property
    def stuck(self) -> bool:
        """Whether a call to the subscriber has overrun ``subscriber_timeout`` and not returned."""
        worker = self._calling
        return worker is not None and worker.stuck

    def wait_idle(self, timeout: float) -> bool:
        """Wait until everything offered so far is delivered (or dropped); return success.

        Raises:
            PraxoError: ``RUNTIME_INVALID_INPUT`` for a timeout that is not a finite number of
                seconds >= 0 the clock can wait.
        """
        check_timeout(timeout)
        return self._idle.wait(timeout)

    def _end(self) -> tuple[int, int]:
        """End delivery and return the final counts (delivered, dropped); the table's owner
        calls it as it removes the subscription (a dead one has ended itself already)."""
        with self._lock:
            if self._active:  # a dead one is idle once its own removal is done
                self._active = False
                self._buffer.clear()
                self._idle.set()
            return self.delivered, self.dropped

    def _offer(self, payload: bytes, pool: DeliveryPool) -> None:
        """Buffer one encoded event, or drop it (on the bus thread)."""
        with self._lock:
            if not self._active:
                return
            if len(self._buffer) >= self._maxlen:
                self.dropped += 1
                return
            self._buffer.append(payload)
            if self._draining:
                return
            self._draining = True
            self._idle.clear()
        self._schedule(pool)

    def _schedule(self, pool: DeliveryPool) -> None:
        if not pool.submit(self._drain):  # the pool is shut down: the bus is stopping
            with self._lock:
                self._draining = False
                self._idle.set()

    def _drain(self, worker: Worker) -> None:
        self._calling = worker
        try:
            self._deliver_buffer(worker)
        finally:
            self._calling = None

    def _deliver_buffer(self, worker: Worker) -> None:
        """Deliver the buffer, oldest first, until it is empty. An event leaves the buffer only
        once delivered, so the buffer bounds what a stuck subscriber holds, the event in its
        call included. A drain whose thread was handed off (a slow call) goes on on that
        thread, which is then this subscription's own until the buffer is empty."""
        while True:
            with self._lock:
                if not self._buffer or not self._active:
                    self._draining = False
                    self._idle.set()
                    return
                batch = list(self._buffer)
            done = 0
            for payload in batch:
                if not self._active:
                    break
                worker.begin(self._overran)
                try:
                    alive = self._deliver(_event_decoder.decode(payload))
                finally:
                    worker.end()
                if not alive:
                    return
                done += 1
            with self._lock:
                if not self._active:  # ended meanwhile: its counts were final then
                    self._draining = False
                    return
                self.delivered += done
                for _ in range(done):
                    self._buffer.popleft()

    def _overran(self, elapsed: float) -> None:
        logger.warning(
            "subscriber_stuck",
            subscription=self.id,
            pattern=self.pattern,
            subscriber=_describe(self._target),
            seconds=round(elapsed, 3),
        )

    def _deliver(self, event: Event) -> bool:
        try:
            if self._is_actor:
                ref: pykka.ActorRef[Any] = self._target  # type: ignore[assignment]
                # No timeout: the watchdog bounds how long this holds a place in the pool, and
                # a stopped actor answers at once (ActorDeadError).
                ref.ask(event)
            else:
                self._target(event)  # type: ignore[operator]
        except BaseException as exc:  # a failing subscriber is dead: remove it, keep the bus alive
            logger.warning(
                "subscriber_removed",
                subscription=self.id,
                pattern=self.pattern,
                error=f"{type(exc).__name__}: {exc}",
            )
            with self._lock:  # ended here at once, so no later offer schedules another call
                self._active = False
                self._buffer.clear()
                self._draining = False
            try:
                if self._bus.remove(self):
                    self._closed()
            finally:
                self._idle.set()  # removed, its hook run: nothing of it is left to wait for
            return False
        return True


def _describe(target: object) -> str:
    if isinstance(target, pykka.ActorRef):
        return repr(target)
    name = getattr(target, "__qualname__", None) or type(target).__qualname__
    return f"{getattr(target, '__module__', '?')}.{name}"
