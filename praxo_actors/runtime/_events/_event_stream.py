"""``runtime.events.stream(...)``: matching events as an async iterator, on the caller's loop."""

from __future__ import annotations

import asyncio
import contextlib
import weakref

from praxo_actors._errors import PraxoError
from praxo_actors.models import Event
from praxo_actors.runtime._events._router import EventRouter
from praxo_actors.runtime._events._subscription import Subscription

__all__ = ["EventStream"]


class EventStream:
    """An async iterator of matching events, subscribed from the moment it is made.

    Made by :meth:`praxo_actors.runtime.Events.stream` inside a running event loop, so no event
    published after that call is missed. It ends when the runtime stops; ``aclose()`` (or
    leaving ``async with``) unsubscribes. A consumer that falls more than ``buffer`` events
    behind loses the newest ones, counted in :attr:`dropped`.
    """

    def __init__(
        self, router: EventRouter, pattern: str, session_id: str | None, buffer: int
    ) -> None:
        self._loop = asyncio.get_running_loop()
        # Unbounded as a queue, bounded by hand: the end-of-stream marker must always fit, or a
        # consumer that fell behind would wait forever after the runtime stops.
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._buffer = buffer
        self.dropped = 0
        self._sub: Subscription | None = None
        # The subscription reaches this stream only weakly, so a stream that is dropped
        # without aclose() is collected, and its finalizer unsubscribes.
        this = weakref.ref(self)
        loop = self._loop

        def forward(event: Event) -> None:
            stream = this()
            if stream is not None:
                loop.call_soon_threadsafe(stream._put, event)

        def closed() -> None:
            stream = this()
            # RuntimeError: the consumer's loop is closed, so nobody is waiting.
            if stream is not None:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(stream._put, None)

        try:
            sub = router.subscribe(forward, pattern, session_id, buffer)
        except PraxoError as exc:
            if exc.code != "RUNTIME_STOPPED":
                raise
            self._queue.put_nowait(None)  # the runtime has stopped: over before it began
            return
        self._sub = sub
        # The collector may run the finalizer on any thread, holding any lock: it only posts.
        self._finalizer = weakref.finalize(self, sub._unsubscribe_soon)
        sub.on_close = closed
        if router.closed:  # closed before the hook was set, so the hook never ran
            self._queue.put_nowait(None)

    def _put(self, event: Event | None) -> None:
        if event is not None and self._queue.qsize() >= self._buffer:
            self.dropped += 1
            return
        self._queue.put_nowait(event)

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> Event:
        if self._sub is None and self._queue.empty():
            raise StopAsyncIteration
        event = await self._queue.get()
        if event is None:
            await self.aclose()
            raise StopAsyncIteration
        return event

    async def aclose(self) -> None:
        """Unsubscribe; the stream then ends. Idempotent."""
        sub, self._sub = self._sub, None
        if sub is not None:
            sub.on_close = None
            self._finalizer.detach()
            sub.unsubscribe()

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()
