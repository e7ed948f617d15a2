"""The router: the bus's state that outlives any one bus actor, and its entry points.

It routes on the bus actor's thread, reading the subscription table's current snapshot, and
takes subscriptions from any thread by posting them to the table's owner (see
:mod:`~praxo_actors.runtime._events._table`); it holds no lock of its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import msgspec
import pykka

from praxo_actors._errors import AgentError
from praxo_actors._log import get_logger
from praxo_actors.codes import RUNTIME_STOPPED
from praxo_actors.models import Event
from praxo_actors.runtime._events._delivery import DeliveryPool
from praxo_actors.runtime._events._matching import check_subscription
from praxo_actors.runtime._events._subscription import Subscription
from praxo_actors.runtime._events._table import SubscriptionTable, TableSnapshot

__all__ = ["EventRouter", "EventStatistics"]

logger = get_logger("praxo_actors.events")

_event_encoder = msgspec.msgpack.Encoder()


class EventStatistics(msgspec.Struct, frozen=True):
    """The bus's counters, from one snapshot of its table (so they never fall)."""

    subscriptions: int
    delivered: int
    """Events delivered, by the active subscriptions and the ended ones."""
    dropped: int
    """Events dropped, by the active subscriptions and the ended ones."""


class EventRouter:
    """Hold the subscriptions and route events to them; safe from any thread.

    It outlives any one bus actor (a restarted bus keeps the subscriptions).
    """

    def __init__(
        self,
        delivery_threads: int = 4,
        subscriber_timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        subscriber_handoff: float | None = None,
    ) -> None:
        self._table = SubscriptionTable()
        # Daemon threads: a subscriber that hangs must not keep a process from exiting.
        self.pool = DeliveryPool(
            delivery_threads, subscriber_timeout, handoff=subscriber_handoff, clock=clock
        )
        self.routed = 0  # written by the bus actor's thread only

    def route(self, events: list[Event]) -> None:
        """Offer each event to every matching subscription (on the bus actor's thread)."""
        subscriptions = self._table.snapshot.subscriptions
        pool = self.pool
        for event in events:
            self.routed += 1
            payload = None
            for sub in subscriptions:
                if sub._filter(event):
                    if payload is None:
                        payload = _event_encoder.encode(event)
                    sub._offer(payload, pool)

    def subscribe(
        self,
        target: Callable[[Event], Any] | pykka.ActorRef[Any],
        pattern: str = "run.*",
        session_id: str | None = None,
        buffer: int = 1000,
    ) -> Subscription:
        """Add a subscription; see :meth:`praxo_actors.runtime.Events.subscribe`.

        It is in the table when this returns, so it gets every event published after that.
        """
        check_subscription(target, pattern, session_id, buffer)
        sub = Subscription(self, target, pattern, session_id, buffer)
        if not self._table.add(sub):
            raise AgentError(RUNTIME_STOPPED, "the event bus is closed")
        return sub

    def remove(self, sub: Subscription) -> bool:
        """End and remove ``sub``; return whether this call removed it."""
        return self._table.remove(sub)

    def remove_soon(self, sub: Subscription) -> None:
        """Ask for ``sub``'s removal without waiting for it."""
        self._table.remove_soon(sub)

    def statistics(self) -> EventStatistics:
        """Return the subscription count and event counters, from one snapshot."""
        table = self._table.snapshot
        counts = [sub.statistics() for sub in table.subscriptions]
        return EventStatistics(
            subscriptions=len(counts),
            delivered=table.delivered + sum(c.delivered for c in counts),
            dropped=table.dropped + sum(c.dropped for c in counts),
        )

    @property
    def snapshot(self) -> TableSnapshot:
        """The subscription table now (frozen)."""
        return self._table.snapshot

    @property
    def subscriptions(self) -> tuple[Subscription, ...]:
        """The active subscriptions."""
        return self._table.snapshot.subscriptions

    @property
    def subscription_count(self) -> int:
        """The number of active subscriptions."""
        return len(self._table.snapshot.subscriptions)

    @property
    def delivered_total(self) -> int:
        """Events delivered by the subscriptions that have ended."""
        return self._table.snapshot.delivered

    @property
    def dropped_total(self) -> int:
        """Events dropped by the subscriptions that have ended."""
        return self._table.snapshot.dropped

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has begun (no new subscription is taken)."""
        return self._table.snapshot.closed

    def close(self, timeout: float = 5.0) -> None:
        """Hand over what was routed, end every subscription and stop the delivery threads.

        Called once the bus actor has stopped: the events it routed (the ``run.failed`` of the
        runs a stop ended among them) reach their subscribers before the subscriptions end,
        within ``timeout`` seconds in all (a stuck subscriber is not waited for). A subscriber
        still busy after that is abandoned (and reported): Python cannot stop a thread, and
        stopping must not wait on a subscriber forever.
        """
        deadline = time.monotonic() + timeout
        for sub in self._table.snapshot.subscriptions:
            if not sub.stuck:
                sub.wait_idle(max(0.0, deadline - time.monotonic()))
        for sub in self._table.close():
            sub._closed()
        for name in self.pool.shutdown(max(0.0, deadline - time.monotonic())):
            logger.error("event_thread_abandoned", thread=name)
