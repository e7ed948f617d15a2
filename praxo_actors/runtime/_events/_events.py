"""The event bus actor and its subscriptions.

Sessions publish events to the bus as encoded :class:`Publish` messages. The bus routes each
event to the subscriptions whose pattern and session match, and each subscription delivers from
its own bounded buffer, one event at a time, on a small delivery pool, so a slow subscriber
drops its own events (counted) and never slows the bus, a session, or another subscriber. A
call still running after ``subscriber_timeout`` seconds is reported and skipped: its thread
leaves the pool (see :mod:`~praxo_actors.runtime._events._delivery`) and the subscription's
later events
wait in its buffer until the call returns. Every subscriber gets its own decoded copy of an
event. A subscriber that raises, or an actor that has stopped, is dead and is removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import itertools
import re
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

import msgspec
import pykka

from praxo_actors._errors import PraxoError
from praxo_actors._log import get_logger
from praxo_actors.models import Event
from praxo_actors.runtime._events._delivery import DeliveryPool, Worker
from praxo_actors.runtime._protocol import Publish, decode

__all__ = ["EventBus", "EventRouter", "EventStream", "Subscription", "SubscriptionStatistics"]

logger = get_logger("praxo_actors.events")

_event_encoder = msgspec.msgpack.Encoder()
_event_decoder = msgspec.msgpack.Decoder(Event)
_ids = itertools.count(1)


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
        bus: EventRouter,
        target: Callable[[Event], Any] | pykka.ActorRef[Any],
        pattern: str,
        session_id: str | None,
        buffer: int,
    ) -> None:
        if buffer < 1:
            raise PraxoError("EVENTS_INVALID_SUBSCRIPTION", "buffer must be at least 1")
        self.id = next(_ids)
        self.pattern = pattern
        self.session_id = session_id
        self._match = re.compile(fnmatch.translate(pattern)).match
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

    def _closed(self) -> None:
        hook, self.on_close = self.on_close, None
        if hook is not None:
            hook()

    def matches(self, event: Event) -> bool:
        """Return whether ``event`` passes this subscription's pattern and session filter."""
        if self.session_id is not None and event.session_id != self.session_id:
            return False
        return self._match(event.type) is not None

    def unsubscribe(self) -> None:
        """Stop delivery; events still buffered are discarded. Idempotent."""
        with self._lock:
            self._active = False
            self._buffer.clear()
        self._bus._remove(self)
        self._closed()

    @property
    def active(self) -> bool:
        """Whether the subscription still receives events."""
        return self._active

    def statistics(self) -> SubscriptionStatistics:
        """Return the subscription's counters."""
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
        return worker is not None and worker.retired and worker.started is not None

    def wait_idle(self, timeout: float) -> bool:
        """Wait until everything offered so far is delivered (or dropped); return success."""
        return self._idle.wait(timeout)

    def _offer(self, payload: bytes, pool: DeliveryPool) -> None:
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
            resumed = self._deliver_buffer(worker)
        finally:
            self._calling = None
        if resumed:  # the call overran and this thread left the pool: the rest goes back to it
            logger.info("subscriber_resumed", subscription=self.id, pattern=self.pattern)
            self._schedule(worker.pool)

    def _deliver_buffer(self, worker: Worker) -> bool:
        """Deliver the buffer, oldest first, until it is empty (return False) or ``worker`` is
        retired (return True). An event leaves the buffer only once delivered, so the buffer
        bounds what a stuck subscriber holds, the event in its call included."""
        while True:
            with self._lock:
                if not self._buffer or not self._active:
                    self._draining = False
                    self._idle.set()
                    return False
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
                    return False
                done += 1
                if worker.retired:
                    break
            with self._lock:
                self.delivered += done
                for _ in range(min(done, len(self._buffer))):
                    self._buffer.popleft()
            if worker.retired and self._active:
                return True

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
            with self._lock:
                self._active = False
                self._buffer.clear()
                self._draining = False
                self._idle.set()
            self._bus._remove(self)
            self._closed()
            return False
        return True


def _describe(target: object) -> str:
    if isinstance(target, pykka.ActorRef):
        return repr(target)
    name = getattr(target, "__qualname__", None) or type(target).__qualname__
    return f"{getattr(target, '__module__', '?')}.{name}"


class EventRouter:
    """Hold the subscriptions and route events to them; safe from any thread.

    It outlives any one bus actor (a restarted bus keeps the subscriptions). Subscriptions are
    copy-on-write, so routing reads a snapshot without locking.
    """

    def __init__(
        self,
        delivery_threads: int = 4,
        subscriber_timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._subscriptions: tuple[Subscription, ...] = ()
        self._lock = threading.Lock()
        # Daemon threads: a subscriber that hangs must not keep a process from exiting.
        self.pool = DeliveryPool(delivery_threads, subscriber_timeout, clock=clock)
        self._closed = False
        self.routed = 0
        # Counts of ended subscriptions, so that the runtime's totals never fall.
        self.delivered_total = 0
        self.dropped_total = 0

    def route(self, events: list[Event]) -> None:
        """Offer each event to every matching subscription."""
        subscriptions = self._subscriptions
        for event in events:
            self.routed += 1
            payload = None
            for sub in subscriptions:
                if sub.matches(event):
                    if payload is None:
                        payload = _event_encoder.encode(event)
                    sub._offer(payload, self.pool)

    def subscribe(
        self,
        target: Callable[[Event], Any] | pykka.ActorRef[Any],
        pattern: str = "run.*",
        session_id: str | None = None,
        buffer: int = 1000,
    ) -> Subscription:
        """Add a subscription; see :meth:`praxo_actors.runtime.Events.subscribe`."""
        if not (callable(target) or isinstance(target, pykka.ActorRef)):
            raise PraxoError(
                "EVENTS_INVALID_SUBSCRIPTION", "subscriber must be callable or an ActorRef"
            )
        if not isinstance(pattern, str) or not pattern:
            raise PraxoError("EVENTS_INVALID_SUBSCRIPTION", "pattern must be a non-empty str")
        if session_id is not None and not isinstance(session_id, str):
            raise PraxoError("EVENTS_INVALID_SUBSCRIPTION", "session_id must be a str or None")
        if isinstance(buffer, bool) or not isinstance(buffer, int):
            raise PraxoError("EVENTS_INVALID_SUBSCRIPTION", "buffer must be an int")
        sub = Subscription(self, target, pattern, session_id, buffer)
        with self._lock:
            if self._closed:
                raise PraxoError("RUNTIME_STOPPED", "the event bus is closed")
            self._subscriptions = (*self._subscriptions, sub)
        return sub

    def _remove(self, sub: Subscription) -> None:
        with self._lock:
            if sub not in self._subscriptions:
                return
            self._subscriptions = tuple(s for s in self._subscriptions if s is not sub)
            self.delivered_total += sub.delivered
            self.dropped_total += sub.dropped

    @property
    def subscriptions(self) -> tuple[Subscription, ...]:
        """The active subscriptions."""
        return self._subscriptions

    @property
    def subscription_count(self) -> int:
        """The number of active subscriptions."""
        return len(self._subscriptions)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has begun (no new subscription is taken)."""
        return self._closed

    def close(self, timeout: float = 5.0) -> None:
        """End every subscription and stop the delivery threads.

        A subscriber still busy after ``timeout`` seconds is abandoned (and reported): Python
        cannot stop a thread, and stopping must not wait on a subscriber forever.
        """
        with self._lock:
            self._closed = True
            subscriptions, self._subscriptions = self._subscriptions, ()
            self.delivered_total += sum(sub.delivered for sub in subscriptions)
            self.dropped_total += sum(sub.dropped for sub in subscriptions)
        for sub in subscriptions:
            with sub._lock:
                sub._active = False
                sub._buffer.clear()
            sub._closed()
        for name in self.pool.shutdown(timeout):
            logger.error("event_thread_abandoned", thread=name)


class EventBus(pykka.ThreadingActor):
    """The actor that receives published events and hands them to the router."""

    use_daemon_thread = True  # never keeps a process alive: the runtime stops at exit

    def __init__(self, router: EventRouter) -> None:
        super().__init__()
        self.router = router

    def on_receive(self, message: Any) -> Any:
        """Route a :class:`Publish` message (encoded bytes)."""
        decoded = decode(message)
        if not isinstance(decoded, Publish):
            raise PraxoError("PROTOCOL_INVALID_MESSAGE", f"event bus got {type(decoded).__name__}")
        self.router.route(decoded.events)
        return None


class EventStream:
    """An async iterator of matching events, subscribed from the moment it is made.

    Made by :meth:`praxo_actors.runtime.Events.stream` inside a running event loop, so no event
    published after that call is missed. It ends when the runtime stops; ``aclose()`` (or
    leaving ``async with``) unsubscribes. A consumer that falls more than ``buffer`` events
    behind loses the newest ones, counted in :attr:`dropped`.
    """

    def __init__(
        self, router: EventRouter, pattern: str, session_id: str | None, buffer: int
    ) -> None:
        self._loop = asyncio.get_running_loop()
        # Unbounded as a queue, bounded by hand: the end-of-stream marker must always fit, or a
        # consumer that fell behind would wait forever after the runtime stops.
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._buffer = buffer
        self.dropped = 0
        self._sub: Subscription | None = None
        # The subscription reaches this stream only weakly, so a stream that is dropped
        # without aclose() is collected, and its finalizer unsubscribes.
        this = weakref.ref(self)
        loop = self._loop

        def forward(event: Event) -> None:
            stream = this()
            if stream is not None:
                loop.call_soon_threadsafe(stream._put, event)

        def closed() -> None:
            stream = this()
            # RuntimeError: the consumer's loop is closed, so nobody is waiting.
            if stream is not None:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(stream._put, None)

        try:
            sub = router.subscribe(forward, pattern, session_id, buffer)
        except PraxoError as exc:
            if exc.code != "RUNTIME_STOPPED":
                raise
            self._queue.put_nowait(None)  # the runtime has stopped: over before it began
            return
        self._sub = sub
        self._finalizer = weakref.finalize(self, sub.unsubscribe)
        sub.on_close = closed
        if router.closed:  # closed before the hook was set, so the hook never ran
            self._queue.put_nowait(None)

    def _put(self, event: Event | None) -> None:
        if event is not None and self._queue.qsize() >= self._buffer:
            self.dropped += 1
            return
        self._queue.put_nowait(event)

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> Event:
        if self._sub is None and self._queue.empty():
            raise StopAsyncIteration
        event = await self._queue.get()
        if event is None:
            await self.aclose()
            raise StopAsyncIteration
        return event

    async def aclose(self) -> None:
        """Unsubscribe; the stream then ends. Idempotent."""
        sub, self._sub = self._sub, None
        if sub is not None:
            sub.on_close = None
            self._finalizer()  # unsubscribes, once

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()
