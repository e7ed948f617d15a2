"""``handle.astream(input)``: one run's own events, as an async iterator, and its result.

The stream subscribes to its session's events before the run is sent, so no event of the run
is missed, and keeps those of its run only. It ends after the run's terminal event
(``run.completed``, ``run.failed``, ``run.interrupted``). A run that ends without one (refused
at admission, failed before its first step, its session stopped) ends the stream once the run
has settled and every event published before that has been handed over: the bus is asked for a
no-op (its mailbox is in order, so every earlier ``Publish`` has been routed by then) and the
subscription is waited for until it is idle.

A consumer that does not read never slows the run: the session only tells the bus, and the
stream holds at most ``buffer`` events; beyond that the newest are dropped and counted in
:attr:`RunStream.dropped` (the terminal event is always kept, so the stream still ends).
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from typing import TYPE_CHECKING, Any

import pykka

from praxo_actors._errors import PraxoError
from praxo_actors.models import Event, RunResult
from praxo_actors.runtime._protocol import Publish, encode

if TYPE_CHECKING:
    from praxo_actors.runtime._events._subscription import Subscription
    from praxo_actors.runtime._kernel._kernel import Kernel
    from praxo_actors.runtime._kernel._run_future import RunFuture

__all__ = ["TERMINAL", "RunStream"]

TERMINAL = frozenset({"run.completed", "run.failed", "run.interrupted"})
"""The event types that end a run's stream."""

HANDOFF = 1000
"""The least the subscription behind a stream buffers on its way to the consumer's loop."""

_NO_OP = encode(Publish(events=[]))


class RunStream:
    """The events of one run, in order, ending after its terminal event; ``result()`` awaits it.

    Made by :meth:`~praxo_actors.runtime.SessionHandle.astream` inside a running event loop.
    Cancelling the task that iterates it (or awaits :meth:`result`) cancels the run, as
    cancelling :meth:`~praxo_actors.runtime.SessionHandle.arun` does; :meth:`aclose` only
    stops the stream (the run goes on, and :meth:`result` still gives its outcome).
    """

    def __init__(self, kernel: Kernel, session_id: str, run_id: str, buffer: int) -> None:
        self.run_id = run_id
        self._kernel = kernel
        self._loop = asyncio.get_running_loop()
        # Unbounded as a queue, bounded by hand: the terminal event and the end marker must
        # always fit, or a consumer that fell behind would never see the stream end.
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._buffer = buffer
        self._dropped = 0
        self._ended = False
        self._finished = False
        self._terminal = False
        self._future: RunFuture | None = None
        self._flush: asyncio.Task[None] | None = None
        this = weakref.ref(self)
        loop = self._loop

        def forward(event: Event) -> None:
            stream = this()
            if stream is not None and event.run_id == run_id:
                with contextlib.suppress(RuntimeError):  # the consumer's loop is closed
                    loop.call_soon_threadsafe(stream._put, event)

        # The subscription's buffer only spans the hand-off to this loop (a call_soon each);
        # what the stream keeps is bounded by ``buffer`` here. Should the hand-off overflow
        # all the same, the run's settling still ends the stream.
        handoff = max(buffer, HANDOFF)
        self._sub: Subscription = kernel.bus.subscribe(forward, "*", session_id, handoff)
        # The collector may run the finalizer on any thread, holding any lock: it only posts.
        self._finalizer = weakref.finalize(self, self._sub._unsubscribe_soon)

        def closed() -> None:  # the runtime stopped: nothing more will come
            stream = this()
            if stream is not None:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(stream._end)

        self._sub.on_close = closed

    def _attach(self, future: RunFuture) -> None:
        """Follow the run's future (the run was sent after the subscription was made)."""
        self._future = future
        this = weakref.ref(self)
        loop = self._loop

        def settled(_future: Any) -> None:
            stream = this()
            if stream is not None:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(stream._settled)

        future.add_done_callback(settled)

    @property
    def dropped(self) -> int:
        """Events of this run lost because the consumer fell ``buffer`` events behind."""
        return self._dropped + self._sub.dropped

    def _put(self, event: Event) -> None:
        if self._ended:
            return
        if event.type in TERMINAL:
            self._terminal = True
            self._queue.put_nowait(event)
            self._end()
        elif self._queue.qsize() >= self._buffer:
            self._dropped += 1
        else:
            self._queue.put_nowait(event)

    def _settled(self) -> None:
        if self._ended or self._terminal or self._flush is not None:
            return
        self._flush = self._loop.create_task(self._drain())

    async def _drain(self) -> None:
        """Hand over what was published before the run settled, then end the stream."""
        try:
            await asyncio.to_thread(_handed_over, self._kernel, self._sub)
        finally:
            self._end()

    def _end(self) -> None:
        if self._ended:
            return
        self._ended = True
        self._queue.put_nowait(None)
        self._sub.on_close = None
        self._finalizer.detach()
        self._sub.unsubscribe()

    def __aiter__(self) -> RunStream:
        return self

    async def __anext__(self) -> Event:
        if self._finished:
            raise StopAsyncIteration
        try:
            event = await self._queue.get()
        except asyncio.CancelledError:
            self._cancel_run()
            raise
        if event is None:
            self._finished = True
            raise StopAsyncIteration
        return event

    async def result(self) -> RunResult:
        """Return the run's :class:`RunResult`, or raise its error (as ``arun`` does)."""
        assert self._future is not None
        try:
            return await self._future
        except asyncio.CancelledError:
            self._cancel_run()
            raise

    async def aclose(self) -> None:
        """Stop the stream (unsubscribe); the run goes on. Idempotent."""
        self._end()
        self._finished = True
        if self._flush is not None and not self._flush.done():
            self._flush.cancel()

    async def __aenter__(self) -> RunStream:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    def _cancel_run(self) -> None:
        future, kernel = self._future, self._kernel
        if future is not None and not future.done():
            kernel.post(kernel.cancel, future.run_id, True)


def _handed_over(kernel: Kernel, sub: Subscription) -> None:
    """Wait (bounded) until the bus has routed, and ``sub`` delivered, what came before.

    The bus's current ref comes from the loop that holds it; a runtime that has stopped has no
    bus left to ask, and what it routed has reached ``sub`` already or never will.
    """
    timeout = kernel.timeout
    with contextlib.suppress(PraxoError, pykka.ActorDeadError, pykka.Timeout):
        bus = kernel.call(kernel.bus_actor, timeout=timeout)
        if bus is not None:
            bus.ask(_NO_OP, timeout=timeout)
    sub.wait_idle(timeout)
