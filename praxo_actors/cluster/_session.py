"""A session of the cluster (``ClusterSession``) and the stream of one of its runs.

``ClusterSession.astream(input)`` gives one run's events from whichever host runs it. The
stream subscribes (through the hub, :class:`~praxo_actors.cluster._events.ClusterEvents`)
before the run is sent, keeps the events of its run only, in ``seq`` order (the hub may get a
host's pushes out of order), and ends after the run's terminal event. Events and the run's
reply travel separately (the hub, and the Ray reply), so a run that settles first is given up
to ``TAIL`` seconds for the rest of its events; a run refused at
admission (no events at all) ends its stream at once. Cancelling the reader does not cancel
the run (as with ``ClusterSession.arun``); past ``buffer`` unread events the newest are
dropped and counted in ``dropped``, and the terminal event is always kept. Given ``resume``
(what the protocol apps use to follow a resumed run), the stream follows the run it resumes,
from its ``run.resumed`` event (the interrupted run's earlier events share its id)."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Callable
from typing import Any, Protocol

from praxo_actors._errors import AgentError, JSONError, PraxoError
from praxo_actors.cluster._core import ClusterCore
from praxo_actors.cluster._future import ClusterRunFuture, _unpack
from praxo_actors.cluster._schedules import SessionSchedules
from praxo_actors.codes import EVENTS_INVALID_SUBSCRIPTION, RUNTIME_INVALID_INPUT, RUNTIME_TIMEOUT
from praxo_actors.core import encode_json
from praxo_actors.models import Event, Message, RunResult

__all__ = ["TAIL", "ClusterRunStream", "ClusterSession", "Runs"]

TAIL = 10.0
"""Seconds a settled run's stream waits for the terminal event still on its way."""

_TERMINAL = frozenset({"run.completed", "run.failed", "run.interrupted"})


class Runs(ClusterCore, Protocol):
    """What a session asks of its cluster: its runs, sent to the host the session routes to."""

    def _run(
        self, session_id: str, agent: str, input: str, deadline: float | None
    ) -> ClusterRunFuture: ...

    def _submit(
        self, session_id: str, agent: str, input: str, deadline: float | None, timeout: float
    ) -> str: ...

    def _resume(
        self, session_id: str, agent: str, document: str, deadline: float | None
    ) -> ClusterRunFuture: ...

    def _result(
        self, session_id: str, agent: str | None, run_id: str, timeout: float | None
    ) -> RunResult: ...


class ClusterSession(SessionSchedules):
    """A session of the cluster: the ``SessionHandle`` surface that crosses hosts."""

    cluster: Runs

    def __init__(self, cluster: Runs, session_id: str, agent: str) -> None:
        self.cluster = cluster
        self.id = session_id
        self.agent = agent

    def run(self, input: str, deadline: float | None = None) -> ClusterRunFuture:
        """Queue a run on the session's host; return its future at once."""
        return self.cluster._run(self.id, self.agent, input, deadline)

    async def arun(self, input: str, deadline: float | None = None) -> RunResult:
        """Run ``input`` on the session's host and return its result."""
        result: RunResult = await self.run(input, deadline)
        return result

    def resume(self, value: Any, deadline: float | None = None) -> ClusterRunFuture:
        """Go on with the session's interrupted run on its host; return its future at once.

        ``value`` answers what the run asked, as for
        :meth:`~praxo_actors.runtime.SessionHandle.resume`. The future's ``run_id`` is the
        interrupted run's from the start (the session's host is asked for it first). If the
        host dies meanwhile it fails with ``SESSION_CRASHED`` (the run stays interrupted in the
        store: resume it again).

        Raises:
            PraxoError: ``RUNTIME_INVALID_INPUT`` for a value that is not JSON;
                ``RUNTIME_STOPPED``.
        """
        try:
            document = encode_json(value)
        except JSONError as exc:
            raise PraxoError(RUNTIME_INVALID_INPUT, f"a resume value must be JSON: {exc}") from None
        return self.cluster._resume(self.id, self.agent, document, deadline)

    async def aresume(self, value: Any, deadline: float | None = None) -> RunResult:
        """:meth:`resume`, awaited: its result."""
        result: RunResult = await self.resume(value, deadline)
        return result

    def history(self, timeout: float = 10.0) -> list[Message]:
        """The session's committed messages (read by the host it routes to)."""
        import ray

        _name, host = self.cluster._route(self.id)
        reply = ray.get(host.history.remote(self.id, self.agent, timeout), timeout=timeout + 5)
        messages: list[Message] = _unpack(reply, None, list[Message])
        return messages

    async def ahistory(self, timeout: float = 10.0) -> list[Message]:
        """:meth:`history`, awaited."""
        import asyncio

        _name, host = self.cluster._route(self.id)
        ref = host.history.remote(self.id, self.agent, timeout)
        try:
            reply = await asyncio.wait_for(ref, timeout + 5)
        except TimeoutError:
            raise PraxoError(RUNTIME_TIMEOUT, f"no history within {timeout} s") from None
        messages: list[Message] = _unpack(reply, None, list[Message])
        return messages

    def result(self, run_id: str, timeout: float = 10.0) -> RunResult:
        """The result of ``run_id`` (resumed from its journal on this host if need be)."""
        return self.cluster._result(self.id, self.agent, run_id, timeout)

    async def aresult(self, run_id: str, timeout: float = 10.0) -> RunResult:
        """:meth:`result`, awaited (it waits in the loop's default executor)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.result, run_id, timeout)

    def submit(self, input: str, deadline: float | None = None, timeout: float = 30.0) -> str:
        """Accept a run on the session's host and return its id (a durable agent's run is in
        the shared store before this returns, so another host resumes it if this one dies).

        Raises:
            PraxoError: As ``SessionHandle.submit``; ``RUNTIME_TIMEOUT``; ``SESSION_CRASHED``
                if the host died before it answered (the run may or may not have been taken).
        """
        return self.cluster._submit(self.id, self.agent, input, deadline, timeout)

    async def asubmit(
        self, input: str, deadline: float | None = None, timeout: float = 30.0
    ) -> str:
        """:meth:`submit`, awaited (it waits in the loop's default executor)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.submit, input, deadline, timeout)

    def astream(
        self, input: str, deadline: float | None = None, buffer: int = 1000
    ) -> ClusterRunStream:
        """Run ``input`` and return a stream of its events, from whichever host runs it
        (call it inside a coroutine; see :class:`~praxo_actors.cluster.ClusterRunStream`)."""
        return ClusterRunStream(self, input, deadline, buffer)


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
