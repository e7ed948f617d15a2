"""The event bus's names in one place: the bus actor, the router, subscriptions and streams.

Sessions publish events to the bus actor (:mod:`._bus`) as encoded ``Publish`` messages; it
hands them to the router (:mod:`._router`), which offers each event to the subscriptions whose
filter matches (:mod:`._matching`). Each subscription (:mod:`._subscription`) delivers from its
own bounded buffer, one event at a time, on the delivery pool (:mod:`._delivery`), so a slow
subscriber drops its own events (counted) and never slows the bus, a session, or another
subscriber; a call still running after ``subscriber_timeout`` seconds is reported and skipped.
Every subscriber gets its own decoded copy of an event. A subscriber that raises, or an actor
that has stopped, is dead and is removed.

Who owns what: the subscription table has one owner, a thread of its own that applies every
subscribe, unsubscribe, removal and close and publishes the table as a frozen snapshot that
everyone else reads without a lock (:mod:`._table`); each subscription owns its buffer and
counters; the delivery pool owns its threads.
"""

from __future__ import annotations

from praxo_actors.runtime._events._bus import EventBus
from praxo_actors.runtime._events._event_stream import EventStream
from praxo_actors.runtime._events._router import EventRouter, EventStatistics
from praxo_actors.runtime._events._subscription import Subscription, SubscriptionStatistics

__all__ = [
    "EventBus",
    "EventRouter",
    "EventStatistics",
    "EventStream",
    "Subscription",
    "SubscriptionStatistics",
]
