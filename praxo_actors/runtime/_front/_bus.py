"""The runtime's event bus, seen from outside: subscriptions and async streams."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pykka

from praxo_actors.models import Event
from praxo_actors.runtime._events._events import EventRouter, EventStream, Subscription

__all__ = ["Events"]


class Events:
    """The runtime's event bus, seen from outside: subscriptions and async streams."""

    def __init__(self, router: EventRouter) -> None:
        self._router = router

    def subscribe(
        self,
        subscriber: Callable[[Event], Any] | pykka.ActorRef[Any],
        pattern: str = "run.*",
        session_id: str | None = None,
        buffer: int = 1000,
    ) -> Subscription:
        """Deliver matching events to ``subscriber`` (a callable, or an actor that is asked).

        Args:
            subscriber: Called (or, for an ``ActorRef``, asked) with each :class:`Event`, one at
                a time, in order, on a delivery thread. If it raises (or the actor has
                stopped) it is removed.
            pattern: A glob on the event type: ``"run.*"``, ``"tool.*"``, ``"*"``.
            session_id: Only this session's events (None: every session's).
            buffer: Events held for a slow subscriber; beyond that they are dropped and counted.

        Raises:
            PraxoError: ``EVENTS_INVALID_SUBSCRIPTION`` for bad arguments; ``RUNTIME_STOPPED``
                once the runtime has stopped.
        """
        return self._router.subscribe(subscriber, pattern, session_id, buffer)

    def stream(
        self, pattern: str = "run.*", session_id: str | None = None, buffer: int = 1000
    ) -> EventStream:
        """Subscribe now and return an async iterator of matching events.

        Call it from a coroutine (it binds to the running event loop); every event published
        after the call is delivered. It ends when the runtime stops; ``async with
        runtime.events.stream(...) as events`` unsubscribes when the block is left.

        Raises:
            PraxoError: ``EVENTS_INVALID_SUBSCRIPTION`` for bad arguments.
            RuntimeError: No event loop is running in this thread.
        """
        return EventStream(self._router, pattern, session_id, buffer)

    @property
    def subscriptions(self) -> tuple[Subscription, ...]:
        """The active subscriptions."""
        return self._router.subscriptions
