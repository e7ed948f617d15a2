"""The observer's event streams: one bus subscription fanned out to bounded client queues.

Every ``GET /api/events`` client shares one subscription to the runtime's events (held while
any client is connected). Each event is redacted and encoded once, on a delivery thread, and
the frame is shared by every client whose pattern and session match. A client's queue holds at
most ``client_buffer`` events (a client that has caught up may take one longer burst whole): a
client that falls further behind (beyond what the socket buffers already hold) is dropped — its
response is cut short, which closes its connection — and counted, so a thousand clients that
never read cost a bounded number of queued events each and never slow the others or the rest
of the app.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import functools
import re
import threading
from collections.abc import Callable, Iterable, MutableMapping
from typing import TYPE_CHECKING, Any

import msgspec

from praxo_actors._errors import PraxoError
from praxo_actors._log import get_logger
from praxo_actors.codes import EVENTS_INVALID_SUBSCRIPTION
from praxo_actors.core import redact_value
from praxo_actors.models import Event
from praxo_actors.observer._responses import error_response
from praxo_actors.observer._stream_client import ClientState, StreamClient, chunked

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime, Subscription

__all__ = ["StreamStatistics", "Streams"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Any]
Send = Callable[[MutableMapping[str, Any]], Any]

logger = get_logger("praxo_actors.observer")

_encoder = msgspec.json.Encoder()
_OPENING = b": praxo-actors observer\n\n"  # a comment: the client sees the stream open at once
_END = b"event: end\ndata: {}\n\n"
_DROPPED = b'event: dropped\ndata: {"reason": "slow"}\n\n'
_PENDING = 10_000  # events waiting for the loop; past that the loop is stalled: drop, count
_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


class StreamStatistics(msgspec.Struct, frozen=True):
    """The observer's event-stream counters (``/api/state``'s ``"observer"``)."""

    clients: int
    """Clients connected to ``/api/events`` now."""
    clients_dropped: int
    """Clients dropped so far for falling more than ``client_buffer`` events behind."""
    events_dropped: int
    """Events lost before any client's queue (the shared subscription fell behind)."""
    queued: int
    """Events queued now, over every client."""
    queued_max: int
    """The longest client queue now, in events (above ``client_buffer`` only by one burst
    taken whole by a client that had caught up)."""
    client_buffer: int
    """The bound on each client's queue."""


class _Fanout:
    """The clients of one event loop and the bus subscription that feeds them."""

    def __init__(self, owner: Streams, loop: asyncio.AbstractEventLoop) -> None:
        self._owner = owner
        self.loop = loop
        self.groups: dict[tuple[str, str | None], list[StreamClient]] = {}
        self.matchers: dict[tuple[str, str | None], Callable[[str], Any]] = {}
        self._pending: list[tuple[str, str, bytes]] = []
        self._lock = threading.Lock()  # the pending frames: delivery thread -> loop
        self._scheduled = False
        self.subscription: Subscription | None = None

    def publish(self, event: Event) -> None:
        """Encode ``event`` once and hand it to the loop (on a delivery thread)."""
        frame = _frame(event, self._owner.redact)
        with self._lock:
            full = len(self._pending) >= _PENDING
            if not full:
                self._pending.append((event.type, event.session_id, frame))
            if full or self._scheduled:
                schedule = False
            else:
                schedule = self._scheduled = True
        if full:
            self._owner.lose()
        if not schedule:
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is listening
            self.loop.call_soon_threadsafe(self.flush)

    def flush(self) -> None:
        """Queue the pending frames for each matching client; drop those they overflow."""
        with self._lock:
            pending, self._pending = self._pending, []
            self._scheduled = False
        for key, clients in list(self.groups.items()):
            matches, session_id = self.matchers[key], key[1]
            frames = [
                frame
                for kind, sid, frame in pending
                if (session_id is None or sid == session_id) and matches(kind)
            ]
            if not frames:
                continue
            chunks = chunked(frames)
            for client in list(clients):
                if not client.put(chunks, len(frames)):
                    self._owner.clients_dropped += 1
                    client.close(ClientState.DROPPED)
                    self.remove(client)
                    logger.info("event_stream_client_dropped", pattern=key[0], queued=client.limit)

    def add(self, client: StreamClient) -> None:
        if client.key not in self.groups:
            self.groups[client.key] = []
            self.matchers[client.key] = re.compile(fnmatch.translate(client.key[0])).match
        self.groups[client.key].append(client)

    def remove(self, client: StreamClient) -> None:
        clients = self.groups.get(client.key)
        if clients is None or client not in clients:
            return
        clients.remove(client)
        if not clients:
            del self.groups[client.key], self.matchers[client.key]

    def end_all(self) -> None:
        """End every client's stream (the runtime has stopped); later clients get a new
        fanout, which finds the runtime stopped."""
        self._owner.forget(self)
        self.flush()
        for clients in list(self.groups.values()):
            for client in clients:
                client.close(ClientState.ENDED)
        self.groups.clear()
        self.matchers.clear()

    def clients(self) -> Iterable[StreamClient]:
        return [client for clients in list(self.groups.values()) for client in clients]


class Streams:
    """Serve ``/api/events`` for one observer app: the fan-out and its counters."""

    def __init__(self, runtime: Runtime, redact: bool, client_buffer: int) -> None:
        self._runtime = runtime
        self.redact = redact
        self.client_buffer = client_buffer
        self._fanouts: dict[asyncio.AbstractEventLoop, _Fanout] = {}
        self._lock = threading.Lock()  # the fanouts, one per loop serving the app
        self.clients_dropped = 0
        self.lost = 0
        self._lost_before = 0  # events the ended subscriptions dropped

    def statistics(self) -> StreamStatistics:
        """Return the counters now."""
        with self._lock:
            fanouts = list(self._fanouts.values())
        clients = [client for fanout in fanouts for client in fanout.clients()]
        lengths = [client.queued for client in clients]
        bus_dropped = sum(
            f.subscription.statistics().dropped for f in fanouts if f.subscription is not None
        )
        return StreamStatistics(
            clients=len(clients),
            clients_dropped=self.clients_dropped,
            events_dropped=self.lost + self._lost_before + bus_dropped,
            queued=sum(lengths),
            queued_max=max(lengths, default=0),
            client_buffer=self.client_buffer,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one ``GET /api/events`` (an ASGI app)."""
        from starlette.requests import Request

        query = Request(scope).query_params
        pattern = query.get("pattern", "*")
        session_id = query.get("session_id") or None
        try:
            client, fanout = self._join(pattern, session_id)
        except PraxoError as exc:
            await error_response(exc)(scope, receive, send)
            return
        listener = asyncio.ensure_future(_until_disconnected(receive, client))
        try:
            await self._write(client, send)
        finally:
            listener.cancel()
            if fanout is not None:
                self._leave(fanout, client)

    def _join(self, pattern: str, session_id: str | None) -> tuple[StreamClient, _Fanout | None]:
        if not pattern:
            raise PraxoError(EVENTS_INVALID_SUBSCRIPTION, "pattern must be a non-empty str")
        client = StreamClient((pattern, session_id), self.client_buffer)
        loop = asyncio.get_running_loop()
        with self._lock:
            fanout = self._fanouts.get(loop)
            if fanout is None:
                fanout = _Fanout(self, loop)
                try:
                    fanout.subscription = self._runtime.events.subscribe(
                        fanout.publish, pattern="*", buffer=_PENDING
                    )
                except PraxoError as exc:
                    if exc.code != "RUNTIME_STOPPED":
                        raise
                    client.close(ClientState.ENDED)  # over before it began
                    return client, None
                fanout.subscription.on_close = functools.partial(_end_soon, fanout)
                if not fanout.subscription.active:  # closed before the hook was set
                    client.close(ClientState.ENDED)
                    return client, None
                self._fanouts[loop] = fanout
            fanout.add(client)
        return client, fanout

    def forget(self, fanout: _Fanout) -> Subscription | None:
        """Give no new client to ``fanout``; return its subscription if it still had it."""
        with self._lock:
            if self._fanouts.get(fanout.loop) is not fanout:
                return None
            del self._fanouts[fanout.loop]
            sub, fanout.subscription = fanout.subscription, None
            if sub is not None:
                self._lost_before += sub.statistics().dropped
        return sub

    def end(self) -> None:
        """End every client's stream now, as when the runtime stops (from any thread)."""
        with self._lock:
            fanouts = list(self._fanouts.values())
        for fanout in fanouts:
            _end_soon(fanout)

    def lose(self) -> None:
        """Count an event lost before any client's queue."""
        with self._lock:
            self.lost += 1

    def _leave(self, fanout: _Fanout, client: StreamClient) -> None:
        client.close(ClientState.GONE)
        fanout.remove(client)
        if fanout.groups:
            return
        sub = self.forget(fanout)  # the last client has gone: so does the subscription
        if sub is not None:
            sub.on_close = None
            sub.unsubscribe()

    async def _write(self, client: StreamClient, send: Send) -> None:
        """Send the stream until it ends; cut short (returning) when the client is dropped."""
        try:
            await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
            chunk = _OPENING
            while chunk:
                async with asyncio.timeout_at(client.deadline) as client.cut:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                client.cut = None
                if client.chunks:
                    # A send that does not block does not yield: without this, a burst to a
                    # thousand clients is one loop iteration of ~8,000 sends (0.9 s measured),
                    # and every other request of the app waits behind it.
                    await asyncio.sleep(0)
                chunk = await client.take()
            if client.state is ClientState.GONE:
                return
            last = _END if client.state is ClientState.ENDED else _DROPPED
            async with asyncio.timeout_at(client.deadline):
                await send({"type": "http.response.body", "body": last, "more_body": False})
        except TimeoutError:
            # Dropped, or ended and not read within FAREWELL: the response stays incomplete,
            # and the server closes the connection.
            if client.state is ClientState.OPEN:
                raise
        except OSError:  # the client went away (ASGI 2.4 servers raise it from send)
            client.close(ClientState.GONE)


async def _until_disconnected(receive: Receive, client: StreamClient) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            client.close(ClientState.GONE)
            return


def _end_soon(fanout: _Fanout) -> None:
    """End the fanout's streams on its loop (called by the bus as it closes, on its thread)."""
    with contextlib.suppress(RuntimeError):  # the loop is closed: nothing is streaming
        fanout.loop.call_soon_threadsafe(fanout.end_all)


def _frame(event: Event, redact: bool) -> bytes:
    data = redact_value(event.data) if redact else event.data
    record = {
        "type": event.type,
        "run_id": event.run_id,
        "session_id": event.session_id,
        "seq": event.seq,
        "time_ns": event.time_ns,
        "data": data,
    }
    return b"data: " + _encoder.encode(record) + b"\n\n"
