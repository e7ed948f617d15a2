"""One event-stream client of the observer: its bounded queue and its writer's state."""

from __future__ import annotations

import asyncio
import enum
from collections import deque

__all__ = ["CHUNK", "FAREWELL", "ClientState", "StreamClient", "chunked"]

CHUNK = 16 * 1024  # events joined into one send up to this size: few sends, small copies
FAREWELL = 1.0  # seconds the last of a stream that has ended may take to go out


class ClientState(enum.Enum):
    """Where an event-stream client's stream is."""

    OPEN = "open"
    ENDED = "ended"  # the runtime stopped: what is queued goes out, then the end
    DROPPED = "dropped"  # too slow: the queue is discarded and the response cut
    GONE = "gone"  # the client disconnected


class StreamClient:
    """One event-stream client: its filter, its bounded queue, its writer's state.

    The queue holds chunks of frames shared with every client of the same filter (joined
    once per flush, so a thousand clients cost one join, not a thousand); ``queued`` counts
    the events in it, and is what the bound applies to.
    """

    def __init__(self, key: tuple[str, str | None], limit: int) -> None:
        self.key = key
        self.limit = limit
        self.chunks: deque[tuple[bytes, int]] = deque()
        self.queued = 0
        self.state = ClientState.OPEN
        self.cut: asyncio.Timeout | None = None  # the send in progress, to cut on a drop
        self.deadline: float | None = None  # (loop time) once ended: when the last must be out
        self._waiter: asyncio.Future[None] | None = None

    def put(self, chunks: list[tuple[bytes, int]], events: int) -> bool:
        """Queue ``chunks`` (``events`` events); return False (queueing nothing) when they do
        not fit.

        A writer waiting for events has sent everything so far: it takes a burst longer than
        the bound whole (at most one flush: the fan-out's limit of pending events) rather than
        being dropped for events that came at once.
        """
        if self.queued + events > self.limit and self._waiter is None:
            return False
        self.chunks.extend(chunks)
        self.queued += events
        self._wake()
        return True

    def close(self, state: ClientState) -> None:
        """End the stream (the first reason given stands).

        A drop discards the queue and cuts the send in progress at once; an end (the runtime
        stopped) gives what is queued ``FAREWELL`` seconds to go out.
        """
        if self.state is not ClientState.OPEN:
            return
        self.state = state
        if state is ClientState.DROPPED:
            self.chunks.clear()
            self.queued = 0
        if state is not ClientState.GONE:
            now = asyncio.get_running_loop().time()
            self.deadline = now if state is ClientState.DROPPED else now + FAREWELL
            if self.cut is not None:
                self.cut.reschedule(self.deadline)
        self._wake()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def take(self) -> bytes:
        """Wait for events and return the next chunk of them; b"" once the stream has ended."""
        while not self.chunks and self.state is ClientState.OPEN:
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        if not self.chunks or self.state in (ClientState.DROPPED, ClientState.GONE):
            return b""
        chunk, events = self.chunks.popleft()
        self.queued -= events
        return chunk


def chunked(frames: list[bytes]) -> list[tuple[bytes, int]]:
    """Join ``frames`` into chunks of up to ``CHUNK`` bytes (a longer frame is one chunk)."""
    chunks: list[tuple[bytes, int]] = []
    run: list[bytes] = []
    size = 0
    for frame in frames:
        if run and size + len(frame) > CHUNK:
            chunks.append((b"".join(run), len(run)))
            run, size = [], 0
        run.append(frame)
        size += len(frame)
    if run:
        chunks.append((b"".join(run), len(run)))
    return chunks
