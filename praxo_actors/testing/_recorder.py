"""An event sink that records what it receives, for assertions in tests."""

from __future__ import annotations

import threading

from praxo_actors.models import Event

__all__ = ["EventRecorder"]


class EventRecorder:
    """Record every event passed to it; usable as a run's ``sink`` or a bus subscriber.

    Safe to call from any thread; :meth:`wait_for` blocks (with a timeout) until an event
    arrives, for events delivered by actors on other threads.
    """

    def __init__(self) -> None:
        self._events: list[Event] = []
        self._changed = threading.Condition()

    def __call__(self, event: Event) -> None:
        """Record ``event``."""
        with self._changed:
            self._events.append(event)
            self._changed.notify_all()

    @property
    def events(self) -> list[Event]:
        """A copy of the events recorded so far, in arrival order."""
        with self._changed:
            return list(self._events)

    def types(self) -> list[str]:
        """Return the ``type`` of every recorded event, in arrival order."""
        return [event.type for event in self.events]

    def clear(self) -> None:
        """Forget every recorded event."""
        with self._changed:
            self._events.clear()

    def wait_for(self, type: str, timeout: float = 5.0) -> Event:
        """Return the first recorded event of ``type``, waiting up to ``timeout`` seconds.

        Raises:
            TimeoutError: No such event arrived in time.
        """

        def first() -> Event | None:
            return next((e for e in self._events if e.type == type), None)

        with self._changed:
            event = self._changed.wait_for(first, timeout)
        if event is None:
            raise TimeoutError(f"no {type!r} event within {timeout} s; got {self.types()}")
        return event
