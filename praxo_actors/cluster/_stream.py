"""``ClusterSession.astream(input)``: one run's events from whichever host runs it.

The stream subscribes (through the hub, :class:`~praxo_actors.cluster._runtime.ClusterEvents`)
before the run is sent, keeps the events of its run only, in ``seq`` order (the hub may get a
host's pushes out of order), and ends after the run's terminal event. Events and the run's
reply travel separately (the hub, and the Ray reply), so a run that settles first is given up
to ``TAIL`` seconds for the rest of its events; a run refused at
admission (no events at all) ends its stream at once. Cancelling the reader does not cancel
the run (as with ``ClusterSession.arun``); past ``buffer`` unread events the newest are
dropped and counted in ``dropped``, and the terminal event is always kept. Given ``resume``
(what the protocol apps use to follow a resumed run), the stream follows the run it resumes,
from its ``run.resumed`` event (the interrupted run's earlier events share its id).
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors.codes import EVENTS_INVALID_SUBSCRIPTION
from praxo_actors.models import Event, RunResult

if TYPE_CHECKING:
    from praxo_actors.cluster._runtime import ClusterRunFuture, ClusterSession

__all__ = ["TAIL", "ClusterRunStream"]

TAIL = 10.0
"""Seconds a settled run's stream waits for the terminal event still on its way."""

_TERMINAL = frozenset({"run.completed", "run.failed", "run.interrupted"})


class ClusterRunStream:
    """The events of one cluster run, in order; ``await stream.result()`` gives its result."""

    def __init__(
        self,
        session: ClusterSession,
        input: str,
        deadline: float | None,
        buffer: int,
        *,
        resume: Callable[[], ClusterRunFuture] | None = None,
    ) -> None:
        """Subscribe, then send the run (``resume``: call it instead, to follow the resumed
        run it returns the future of, from its ``run.resumed`` event)."""
        if isinstance(buffer, bool) or not isinstance(buffer, int) or buffer < 1:
            raise PraxoError(EVENTS_INVALID_SUBSCRIPTION, "buffer must be an int >= 1")
        loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._buffer = buffer
        self.dropped = 0
        self._ended = asyncio.Event()
        self._finished = False
        self._held: dict[int, Event] = {}  # arrived ahead of an earlier event
        self._early: list[Event] = []  # a resumed run's, before its ``run.resumed`` came
        # The seq of the next event to hand over (a resumed run's: its ``run.resumed``'s).
        self._next: int | None = 0 if resume is None else None
        self._last: int | None = None  # the terminal event's seq, once it came
        self.run_id: str | None = None
        this = weakref.ref(self)

        def forward(event: Event) -> None:  # on the cluster's event thread
            stream = this()
            if stream is not None:
                with contextlib.suppress(RuntimeError):  # the consumer's loop is closed
                    loop.call_soon_threadsafe(stream._put, event)

        self._unsubscribe = session.cluster.events.subscribe(forward, "*", session.id)
        try:
            future = session.run(input, deadline) if resume is None else resume()
        except BaseException:
            self._unsubscribe()
            raise
        self.run_id = future.run_id
        self._follow = loop.create_task(self._settle(future))

    def _put(self, event: Event) -> None:
        # Called on this loop after __init__ returned, so the run id is known by then.
        if self._ended.is_set() or event.run_id != self.run_id:
            return
        if self._next is None:  # a resumed run's events start at its ``run.resumed``
            if event.type != "run.resumed":
                if len(self._early) < self._buffer:
                    self._early.append(event)  # the interrupted run's, or ahead of it
                return
            self._next = event.seq
            early, self._early = self._early, []
            self._put(event)
            for later in early:
                if later.seq > event.seq:
                    self._put(later)
            return
        if event.seq < self._next:
            return
        # The hub may receive a host's pushes out of order: events are released by ``seq``.
        if event.type in _TERMINAL:
            self._last = event.seq
        if len(self._held) >= self._buffer and event.type not in _TERMINAL:
            self.dropped += 1
            return
        self._held[event.seq] = event
        while self._next in self._held:
            ready = self._held.pop(self._next)
            self._next += 1
            if ready.type not in _TERMINAL and self._queue.qsize() >= self._buffer:
                self.dropped += 1
            else:
                self._queue.put_nowait(ready)
        if self._last is not None and self._next > self._last:
            self._end()

    def _end(self) -> None:
        if not self._ended.is_set():
            self._ended.set()
            for seq in sorted(self._held):  # a gap that never filled: what came, in order
                self._queue.put_nowait(self._held[seq])
            self._held.clear()
            self._queue.put_nowait(None)
            self._unsubscribe()

    async def _settle(self, future: Any) -> tuple[bool, Any]:
        try:
            outcome: tuple[bool, Any] = (True, await future)
        except Exception as exc:
            outcome = (False, exc)
        refused = not outcome[0] and not isinstance(outcome[1], AgentError)
        if not refused:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(TAIL):
                    await self._ended.wait()
        self._end()
        return outcome

    def __aiter__(self) -> ClusterRunStream:
        return self

    async def __anext__(self) -> Event:
        if self._finished:
            raise StopAsyncIteration
        event = await self._queue.get()
        if event is None:
            self._finished = True
            raise StopAsyncIteration
        return event

    async def result(self) -> RunResult:
        """Return the run's :class:`RunResult`, or raise its error."""
        ok, value = await asyncio.shield(self._follow)
        if not ok:
            raise value
        result: RunResult = value
        return result

    async def aclose(self) -> None:
        """Stop the stream (unsubscribe); the run goes on. Idempotent."""
        self._end()
        self._finished = True
