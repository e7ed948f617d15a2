"""The observer under event-stream clients that never read, over real loopback HTTP."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from _helpers import assert_no_new_threads
from _observed import TIMEOUT
from test_observer_api import sse

from praxo_actors import PraxoError
from praxo_actors.agent import new_agent_options
from praxo_actors.observer import ObserverServer, observer_app
from praxo_actors.runtime import Runtime
from praxo_actors.testing import EchoModel
from praxo_actors.testing._eventually import eventually

SLOW = 100  # clients that never read
BUFFER = 64  # each client's queue, in events (above the 40 events of one batch)
BATCHES, PER_BATCH = 30, 10  # 300 runs, each with a 2 KB input and output
TEXT = "x" * 2048


@pytest.fixture
def served() -> Iterator[tuple[Runtime, ObserverServer]]:
    """A runtime with an echo agent, observed with small client queues; both stopped after."""
    before = set(threading.enumerate())
    runtime = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
    server = None
    try:
        runtime.register_agent("default", lambda: new_agent_options(EchoModel()))
        server = ObserverServer(runtime, timeout=TIMEOUT, client_buffer=BUFFER)
        yield runtime, server
    finally:
        runtime.stop()
        if server is not None:
            server.stop()
    assert_no_new_threads(before, TIMEOUT)


def never_reading(port: int) -> socket.socket:
    """Connect with a tiny receive buffer and ask for the event stream, then never read."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.settimeout(TIMEOUT)
    sock.connect(("127.0.0.1", port))
    # The Host the server was bound on: any other is refused (DNS rebinding).
    head = f"GET /api/events?pattern=* HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    sock.sendall(head.encode())
    return sock


class Reader:
    """A client that reads the stream as it comes, counting ``run.completed`` events."""

    def __init__(self, url: str) -> None:
        self._changed = threading.Condition()
        self.completed = 0
        self.ended = False
        self._open = threading.Event()
        self._url = url
        self._thread = threading.Thread(target=self._read, name="test-reader")
        self._thread.start()
        assert self._open.wait(TIMEOUT), "the reader's stream did not open"

    def _read(self) -> None:
        with (
            httpx.Client(base_url=self._url, timeout=TIMEOUT * 3) as client,
            client.stream("GET", "/api/events", params={"pattern": "run.completed"}) as reply,
        ):
            for item in sse(reply.iter_lines()):
                self._open.set()
                with self._changed:
                    if item["event"] == "message":
                        self.completed += 1
                    self.ended = self.ended or item["event"] == "end"
                    self._changed.notify_all()
                if self.ended:
                    return

    def wait_completed(self, n: int) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self.completed >= n, TIMEOUT)

    def join(self) -> None:
        self._thread.join(TIMEOUT)
        assert not self._thread.is_alive()


def test_clients_that_never_read_are_dropped_and_counted(
    served: tuple[Runtime, ObserverServer],
) -> None:
    """Slow clients are dropped once their queue is full, counted, and hold at most BUFFER
    events each meanwhile; /api/state answers throughout, and a client that reads gets every
    event to the end."""
    runtime, server = served
    observed: list[dict[str, Any]] = []
    with httpx.Client(base_url=server.url, timeout=TIMEOUT) as http:

        def streams() -> dict[str, Any]:
            reply = http.get("/api/state")
            assert reply.status_code == 200, reply.text
            counters: dict[str, Any] = reply.json()["observer"]
            observed.append(counters)
            return counters

        reader = Reader(server.url)
        slow = [never_reading(server.port) for _ in range(SLOW)]
        try:
            eventually(lambda: streams()["clients"] == SLOW + 1, what="every client connected")
            for batch in range(BATCHES):
                futures = [runtime.session(f"s{n}").run(TEXT) for n in range(PER_BATCH)]
                for future in futures:
                    future.get(timeout=TIMEOUT)
                # The reader keeps up; the slow clients fall behind.
                assert reader.wait_completed((batch + 1) * PER_BATCH), reader.completed
                streams()
            eventually(
                lambda: streams()["clients_dropped"] == SLOW, what="every slow client dropped"
            )
            final = streams()
        finally:
            for sock in slow:
                sock.close()
        assert (final["clients"], final["clients_dropped"], final["events_dropped"]) == (1, SLOW, 0)
        assert final["client_buffer"] == BUFFER
        assert all(c["queued_max"] <= BUFFER for c in observed)
        assert all(c["queued"] <= BUFFER * c["clients"] for c in observed)
        runtime.stop()
        reader.join()
    assert (reader.completed, reader.ended) == (BATCHES * PER_BATCH, True)


def test_a_dropped_client_sees_its_stream_closed(served: tuple[Runtime, ObserverServer]) -> None:
    """A client dropped for not reading finds, once it reads, that its stream was closed."""
    runtime, server = served
    sock = never_reading(server.port)
    try:
        with httpx.Client(base_url=server.url, timeout=TIMEOUT) as http:

            def dropped() -> bool:
                runtime.session("s").run(TEXT).get(timeout=TIMEOUT)
                counters = http.get("/api/state").json()["observer"]
                return bool(counters["clients_dropped"] == 1)

            eventually(dropped, what="the client dropped")
        received = b""
        while chunk := sock.recv(65536):  # ends (b"") when the server closes the connection
            received += chunk
    finally:
        sock.close()
    assert received.startswith(b"HTTP/1.1 200")
    assert b"text/event-stream" in received
    assert not received.endswith(b"0\r\n\r\n")  # cut short: no end of the chunked body


def test_bad_client_buffers_are_refused(served: tuple[Runtime, ObserverServer]) -> None:
    """A client_buffer that is not an int >= 1 is RUNTIME_INVALID_INPUT."""
    runtime, _ = served
    for bad in (0, -1, True, 2.5, "8"):
        with pytest.raises(PraxoError) as info:
            observer_app(runtime, client_buffer=bad)  # type: ignore[arg-type]
        assert info.value.code == "RUNTIME_INVALID_INPUT"


def test_stopping_the_server_ends_the_streams_first(
    served: tuple[Runtime, ObserverServer], caplog: pytest.LogCaptureFixture
) -> None:
    """``ObserverServer.stop()`` with a stream open (the runtime still running) ends it with
    an ``end`` event instead of leaving uvicorn to cancel it."""
    runtime, server = served
    reader = Reader(server.url)
    runtime.session("s").run("hi").get(timeout=TIMEOUT)
    assert reader.wait_completed(1)
    with caplog.at_level(logging.INFO, logger="uvicorn.error"):
        server.stop()
    reader.join()
    assert (reader.completed, reader.ended) == (1, True)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
