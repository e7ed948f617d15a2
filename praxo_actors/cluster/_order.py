"""Keep a session's runs in submission order across Ray, which starts a host's calls in any order.

A host is an async Ray actor, and Ray runs an async actor's calls out of order, even calls one
thread sent one after the other. So the caller numbers each session's runs (:class:`Sent`), and
a run sent while the session's previous run to the same host is still in flight names that
run's number; the host (:class:`Turns`) holds it until that run has been queued in its session,
or for :data:`TURN_WAIT` seconds at most: a run sent to a host that died before taking it never
comes, and its successor must not wait for it for ever.

Two hosts cannot order a session's runs between them, so while a session's last run is in flight
its next run goes to that run's host (:meth:`Sent.pinned`), even if the session's route has moved
meanwhile (a host that failed a call is passed over): the route changes only between runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import weakref
from collections import OrderedDict
from typing import Any

__all__ = ["TURN_WAIT", "Sent", "Turns"]

TURN_WAIT = 5.0
"""Seconds a run waits at its host for its session's previous run. Ray delivers two calls of
one caller within milliseconds of each other; this bound only matters when the earlier call
was lost with the host that died holding it."""

KEPT = 100_000
"""Sessions whose last submitted number a host keeps (the oldest are dropped first)."""


class _Last:
    __slots__ = ("future", "host", "number")

    def __init__(self, host: str, number: int) -> None:
        self.host = host
        self.number = number
        self.future: weakref.ref[Any] | None = None


class Sent:
    """The caller's side: the numbers it gives runs, and each session's last run sent while
    that run's future lives (the entry goes when the future is collected).

    Numbers grow over every session (one counter), so a session's runs are numbered in the
    order they were sent even after its entry went: a host compares them, never counts them.
    """

    def __init__(self) -> None:
        self._numbers = itertools.count()
        self._last: dict[str, _Last] = {}
        self._lock = threading.RLock()  # re-entered when a collection runs a callback here

    def send(self, session_id: str, host: str, future: Any) -> tuple[int, int | None]:
        """Note ``future``'s run as the session's last, sent to ``host``.

        ``future`` has a ``settled()`` method: whether its run's call has returned.

        Returns:
            The run's number, and the number of the run it must follow at ``host`` (None:
            nothing of the session in flight there).
        """
        with self._lock:
            number = next(self._numbers)
            last = self._last.get(session_id)
            after = None
            if last is not None and last.host == host:
                previous = None if last.future is None else last.future()
                if previous is None or not previous.settled():
                    after = last.number
            entry = _Last(host, number)
            entry.future = weakref.ref(future, lambda _ref: self._forget(session_id, entry))
            self._last[session_id] = entry
            return number, after

    def pinned(self, session_id: str) -> str | None:
        """The host of the session's last run while that run's call is in flight (None: none).

        A run sent elsewhere meanwhile could commit before it: the caller sends it there too.
        """
        with self._lock:
            last = self._last.get(session_id)
            if last is None:
                return None
            previous = None if last.future is None else last.future()
            if previous is not None and previous.settled():
                return None
            return last.host

    def send_again(
        self, session_id: str, host: str, future: Any, number: int
    ) -> tuple[int, int | None] | None:
        """:meth:`send` the session's run ``number`` again, if it is still the last one sent.

        Returns:
            As :meth:`send`; None if a later run was sent since (sent again now, this run
            would commit after it).
        """
        with self._lock:
            last = self._last.get(session_id)
            if last is None or last.number != number:
                return None
            return self.send(session_id, host, future)

    def _forget(self, session_id: str, entry: _Last) -> None:
        with self._lock:
            if self._last.get(session_id) is entry:
                del self._last[session_id]

    def __len__(self) -> int:
        with self._lock:
            return len(self._last)


class Turns:
    """The host's side: the last number queued per session, and the runs waiting their turn.

    Used only from the host's event loop (a Ray actor's loop), so it takes no lock.
    """

    def __init__(self, kept: int = KEPT) -> None:
        self._queued: OrderedDict[str, int] = OrderedDict()
        self._waiting: dict[str, list[tuple[int, asyncio.Event]]] = {}
        self._kept = kept

    async def wait(self, session_id: str, after: int, timeout: float = TURN_WAIT) -> bool:
        """Wait until the session's run ``after`` was queued here; False after ``timeout``."""
        if self._queued.get(session_id, -1) >= after:
            return True
        event = asyncio.Event()
        waiters = self._waiting.setdefault(session_id, [])
        waiters.append((after, event))
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout)
            return event.is_set()
        finally:
            waiters.remove((after, event))
            if not waiters:
                del self._waiting[session_id]

    def queued(self, session_id: str, number: int) -> None:
        """Note that the session's run ``number`` is queued (or refused): wake its successor."""
        if number > self._queued.get(session_id, -1):
            self._queued[session_id] = number
        self._queued.move_to_end(session_id)
        while len(self._queued) > self._kept:
            self._queued.popitem(last=False)
        for after, event in self._waiting.get(session_id, ()):
            if after <= number:
                event.set()
