"""``ClusterEvents``: subscriptions in this process to every host's events, through the hub."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

import msgspec

from praxo_actors._errors import PraxoError
from praxo_actors.codes import EVENTS_INVALID_SUBSCRIPTION
from praxo_actors.models import Event

__all__ = ["TAKE_WAIT", "ClusterEvents", "Publishes"]

TAKE_WAIT = 0.5  # how long the hub holds a subscriber's take open when it has nothing new


class Publishes(Protocol):
    """The hub events are taken from, and the switch that has the hosts push theirs to it."""

    _hub: Any

    def _publish(self, on: bool) -> None: ...


class ClusterEvents:
    """Subscriptions in this process to the events of every host."""

    def __init__(self, cluster: Publishes) -> None:
        self.cluster = cluster
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._subscribers: list[tuple[Callable[[Event], Any], str, str | None]] = []
        self._lock = threading.Lock()

    def subscribe(
        self,
        callback: Callable[[Event], Any],
        pattern: str = "run.*",
        session_id: str | None = None,
    ) -> Callable[[], None]:
        """Call ``callback(event)`` for each event of any host matching; return unsubscribe."""
        import fnmatch

        if not callable(callback):
            raise PraxoError(EVENTS_INVALID_SUBSCRIPTION, "callback must be callable")
        entry = (callback, pattern, session_id)
        with self._lock:
            self._subscribers.append(entry)
            first = self._thread is None
        if first:
            self.cluster._publish(True)
            self._thread = threading.Thread(
                target=self._pump,
                args=(fnmatch.fnmatchcase,),
                name="praxo-cluster-events",
                daemon=True,
            )
            self._thread.start()

        def unsubscribe() -> None:
            with self._lock:
                if entry in self._subscribers:
                    self._subscribers.remove(entry)

        return unsubscribe

    def _pump(self, match: Callable[[str, str], bool]) -> None:
        import ray

        cursor = 0
        hub = self.cluster._hub
        while not self._stop.is_set():
            try:
                # The hub answers at the next push, or empty after TAKE_WAIT seconds.
                cursor, batch = ray.get(hub.take.remote(cursor, 10_000, TAKE_WAIT), timeout=60)
            except ray.exceptions.GetTimeoutError:  # a busy machine: the hub answers later
                continue
            except Exception:  # the cluster is stopping
                return
            with self._lock:
                subscribers = list(self._subscribers)
            for data in batch:
                event = msgspec.msgpack.decode(data, type=Event)
                for callback, pattern, session_id in subscribers:
                    if match(event.type, pattern) and session_id in (None, event.session_id):
                        try:
                            callback(event)
                        except Exception:  # a subscriber's failure is its own
                            continue

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(15)
