"""The subscription table and its one owner.

Who owns what:

- The **table** — which subscriptions exist, the final counts of the ended ones, whether the
  bus is closed — belongs to one thread, ``praxo-events-table``, started with the router and
  ended by its close. Every change (a subscribe, an unsubscribe, a dead subscriber's removal,
  the close) is posted to that thread and applied there, one at a time, in the order posted;
  the poster waits for the answer, so a change has happened when its call returns.
- After each change the owner publishes the table as a new frozen :class:`TableSnapshot`
  (copy-on-write). Readers on any thread — routing on the bus actor's thread, the kernel's
  ``has_subscribers`` and ``statistics`` on the loop, callers of ``events.subscriptions`` —
  read the current snapshot with no lock: one attribute read gives a whole, consistent table.
- Each :class:`~praxo_actors.runtime._events._subscription.Subscription` owns its buffer and
  counters; the owner ends a subscription (freezing its counts) before it publishes the
  snapshot without it, so the live counts of a snapshot's subscriptions plus its totals never
  fall.

The owner runs no user code (``on_close`` hooks run on the caller's thread), so a wait on it is
short; it is bounded all the same. The one change that can come from the owner's own thread —
a finalizer the garbage collector runs there — is queued behind the change under way instead
of waited for.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from praxo_actors._errors import PraxoError
from praxo_actors.codes import RUNTIME_BLOCKING_CALL, RUNTIME_TIMEOUT

if TYPE_CHECKING:
    from praxo_actors.runtime._events._subscription import Subscription

__all__ = ["SubscriptionTable", "TableSnapshot"]


@dataclass(frozen=True, slots=True)
class TableSnapshot:
    """The subscription table at one moment; never changed once published."""

    subscriptions: tuple[Subscription, ...] = ()
    delivered: int = 0
    """Events delivered by the subscriptions that have ended."""
    dropped: int = 0
    """Events dropped by the subscriptions that have ended."""
    closed: bool = False


@dataclass(frozen=True, slots=True)
class _Add:
    sub: Subscription


@dataclass(frozen=True, slots=True)
class _Remove:
    sub: Subscription


@dataclass(frozen=True, slots=True)
class _Close:
    pass


_Change = _Add | _Remove | _Close
_Answer = bool | tuple["Subscription", ...]


@dataclass(slots=True)
class _Request:
    change: _Change
    answer: _Answer = False
    error: Exception | None = None
    done: threading.Event = field(default_factory=threading.Event)


def _refused(change: _Change) -> _Answer:
    """Return what a closed table answers to ``change``."""
    return () if isinstance(change, _Close) else False


class SubscriptionTable:
    """Own the subscription table on one thread; publish it as :attr:`snapshot`.

    Args:
        timeout: Seconds a change waits for the owner before ``RUNTIME_TIMEOUT``.
    """

    def __init__(self, timeout: float = 10.0, *, name: str = "praxo-events-table") -> None:
        self.snapshot = TableSnapshot()
        self._timeout = timeout
        self._inbox: queue.SimpleQueue[_Request] = queue.SimpleQueue()
        self._ended = False  # set by the owner once it reads its inbox no more
        # A daemon: a process that never stops its runtime must still exit.
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def add(self, sub: Subscription) -> bool:
        """Add ``sub``; return False (adding nothing) once the table is closed."""
        answer = self._post(_Add(sub))
        assert isinstance(answer, bool)
        return answer

    def remove(self, sub: Subscription) -> bool:
        """End and remove ``sub``; return whether this call removed it (False: already gone)."""
        answer = self._post(_Remove(sub))
        assert isinstance(answer, bool)
        return answer

    def remove_soon(self, sub: Subscription) -> None:
        """Post ``sub``'s removal and return at once (it is applied in order, as any change)."""
        self._inbox.put(_Request(_Remove(sub)))

    def close(self) -> tuple[Subscription, ...]:
        """Close the table and end the owner; return the subscriptions it ended (once)."""
        answer = self._post(_Close())
        self._thread.join(self._timeout)
        assert isinstance(answer, tuple)
        return answer

    def _post(self, change: _Change) -> _Answer:
        """Hand ``change`` to the owner and wait for its answer (bounded).

        Raises:
            PraxoError: ``RUNTIME_TIMEOUT`` if the owner does not answer in time;
                ``RUNTIME_BLOCKING_CALL`` for an add or close on the owner's own thread.
        """
        request = _Request(change)
        if threading.current_thread() is self._thread:
            # The owner runs no other code, so this is a finalizer the collector ran here (a
            # stream dropped without aclose() unsubscribes). It cannot wait for itself: the
            # removal is applied after the change under way, and its caller told False.
            if not isinstance(change, _Remove):
                raise PraxoError(
                    RUNTIME_BLOCKING_CALL, "the event table's own thread cannot wait on it"
                )
            self._inbox.put(request)
            return False
        self._inbox.put(request)
        # The owner has gone (closed): it may never read this request, so answer it as the
        # closed table would. An answer the owner gave first is set before ``_ended`` is.
        if self._ended and not request.done.is_set():
            return _refused(change)
        if not request.done.wait(self._timeout):
            raise PraxoError(
                RUNTIME_TIMEOUT,
                f"the event bus's subscription table did not answer within {self._timeout} s",
            )
        if request.error is not None:
            raise request.error
        return request.answer

    def _serve(self) -> None:
        """Apply the posted changes in order until the table closes (the owner's thread)."""
        while not self.snapshot.closed:
            request = self._inbox.get()
            try:
                request.answer = self._apply(request.change)
            except Exception as exc:  # a fault of the bus's own: its poster raises it
                request.error = exc
            request.done.set()
        self._ended = True
        while True:  # requests posted while it closed: refused, as ``_post`` would
            try:
                request = self._inbox.get_nowait()
            except queue.Empty:
                return
            request.answer = _refused(request.change)
            request.done.set()

    def _apply(self, change: _Change) -> _Answer:
        table = self.snapshot
        match change:
            case _Add(sub):
                if table.closed:
                    return False
                self.snapshot = TableSnapshot(
                    (*table.subscriptions, sub), table.delivered, table.dropped
                )
                return True
            case _Remove(sub):
                if not any(s is sub for s in table.subscriptions):
                    return False
                delivered, dropped = sub._end()  # before the snapshot without it is published
                self.snapshot = TableSnapshot(
                    tuple(s for s in table.subscriptions if s is not sub),
                    table.delivered + delivered,
                    table.dropped + dropped,
                )
                return True
            case _Close():
                delivered, dropped = table.delivered, table.dropped
                for sub in table.subscriptions:
                    d, x = sub._end()
                    delivered += d
                    dropped += x
                self.snapshot = TableSnapshot((), delivered, dropped, closed=True)
                return table.subscriptions
