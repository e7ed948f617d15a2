"""A scripted HTTP server on 127.0.0.1 that answers as a model provider would.

The test queues replies (:class:`Reply`, :class:`Stream`, :class:`Hang`, :class:`Drop`, and
the misbehaving :class:`Raw`, :class:`Trickle`, :class:`Endless`); each request takes the next
one and is recorded (path, headers, JSON body). Streams are written as server-sent events in
HTTP/1.1 chunks, one flush per event, and may wait on an event between two of them, so a test
can see a delta arrive while the call is still running. Connections are kept alive, as the
SDKs expect; closing the server ends every reply still being written, closes every
connection and joins every thread.
"""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TIMEOUT = 10.0

__all__ = [
    "TIMEOUT",
    "Drop",
    "Endless",
    "Hang",
    "Raw",
    "Recorded",
    "Reply",
    "Server",
    "Stream",
    "Trickle",
    "serve",
]


@dataclass
class Reply:
    """A JSON answer."""

    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Stream:
    """A ``text/event-stream`` answer: ``(event name or None, data)`` pairs.

    ``data`` is sent as JSON, or as it is when it is a str or bytes.

    ``gate`` (with ``after``): the server waits for it after that many events. ``cut``: the
    connection is closed after the events, without the body's last chunk.
    """

    events: list[tuple[str | None, Any]]
    gate: threading.Event | None = None
    after: int = 1
    status: int = 200
    cut: bool = False


@dataclass
class Hang:
    """Answer nothing until ``release`` is set (then a 200 ``{}``, read by no one)."""

    release: threading.Event


@dataclass
class Drop:
    """Close the connection without answering."""


@dataclass
class Raw:
    """A 200 whose body is ``body`` as it is (not JSON-encoded).

    ``length``: the content-length sent (None: the body's own); a longer one leaves the body
    short, and the connection is closed after it.
    """

    body: bytes
    content_type: str = "application/json"
    length: int | None = None


@dataclass
class Trickle:
    """A 200 that never ends: one byte every ``interval`` seconds, until the client goes.

    ``phase="headers"``: the status line, then header bytes one at a time; ``"body"``: the
    headers (a JSON body of a huge content-length, or an event stream when ``events``), then
    body bytes one at a time. Each byte resets an HTTP client's per-read limit.
    """

    phase: str = "body"
    events: bool = False
    interval: float = 0.05


@dataclass
class Endless:
    """A 200 event stream of ``first``, then ``each`` every ``interval`` seconds, forever."""

    each: tuple[str | None, Any]
    first: list[tuple[str | None, Any]] = field(default_factory=list)
    interval: float = 0.05


Script = Reply | Stream | Hang | Drop | Raw | Trickle | Endless


@dataclass
class Recorded:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class Server:
    """The running server: its base URL, the replies to give and the requests received."""

    def __init__(self, httpd: ThreadingHTTPServer) -> None:
        self.httpd = httpd
        host, port = httpd.server_address[:2]
        self.url = f"http://{host!s}:{port}"
        self.replies: queue.Queue[Script] = queue.Queue()
        self.requests: list[Recorded] = []
        self.connections: set[socket.socket] = set()
        self.hangs: list[Hang] = []
        self.lock = threading.Lock()
        self.closing = threading.Event()  # set when the server closes: endless replies end

    def script(self, *replies: Script) -> None:
        """Queue replies, given in order to the next requests."""
        for reply in replies:
            self.replies.put(reply)

    def bodies(self) -> list[Any]:
        """Return the JSON body of every request so far."""
        with self.lock:
            return [r.body for r in self.requests]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        with self.server.owner.lock:
            self.server.owner.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.owner.lock:
            self.server.owner.connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the tests assert on what was recorded

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(length)
        with owner.lock:
            owner.requests.append(
                Recorded(
                    "POST",
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    json.loads(raw) if raw else None,
                )
            )
        try:
            reply = owner.replies.get(timeout=TIMEOUT)
        except queue.Empty:
            reply = Reply({"error": {"message": "no reply scripted"}}, status=599)
        match reply:
            case Reply():
                self._json(reply)
            case Stream():
                self._stream(reply)
            case Hang():
                with owner.lock:
                    owner.hangs.append(reply)
                reply.release.wait(TIMEOUT)
                self.close_connection = True
            case Drop():
                self.close_connection = True
            case Raw():
                self._raw(reply)
            case Trickle():
                self._trickle(reply)
            case Endless():
                self._endless(reply)

    def _json(self, reply: Reply) -> None:
        data = json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, reply: Stream) -> None:
        self.send_response(reply.status)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for count, (name, data) in enumerate(reply.events, start=1):
            self._event(name, data)
            if reply.gate is not None and count == reply.after:
                reply.gate.wait(TIMEOUT)
        if reply.cut:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self._chunk(b"")

    def _raw(self, reply: Raw) -> None:
        self.send_response(200)
        self.send_header("content-type", reply.content_type)
        self.send_header("content-length", str(reply.length or len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)
        if reply.length is not None and reply.length > len(reply.body):
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)

    def _trickle(self, reply: Trickle) -> None:
        self.close_connection = True
        if reply.phase == "headers":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nx-slow: ")
            self._forever(reply.interval, lambda: self.wfile.write(b"a"))
            return
        self.send_response(200)
        if reply.events:
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            self._chunk(b"data: ")
            self._forever(reply.interval, lambda: self._chunk(b" "))
        else:
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(10**12))
            self.end_headers()
            self.wfile.write(b"{")
            self._forever(reply.interval, lambda: self.wfile.write(b" "))

    def _endless(self, reply: Endless) -> None:
        self.close_connection = True
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for name, data in reply.first:
            self._event(name, data)
        self._forever(reply.interval, lambda: self._event(*reply.each))

    def _forever(self, interval: float, send: Callable[[], object]) -> None:
        """Call ``send`` every ``interval`` s until the client goes or the server closes."""
        try:
            while not self.server.owner.closing.wait(interval):
                send()
        except OSError:  # the client closed the connection: what a deadline does
            pass

    def _event(self, name: str | None, data: Any) -> None:
        """Write one event: ``data`` as it is when text or bytes, else as JSON."""
        if not isinstance(data, str | bytes):
            data = json.dumps(data)
        raw = data if isinstance(data, bytes) else data.encode()
        self._chunk((f"event: {name}\n" if name else "").encode() + b"data: " + raw + b"\n\n")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


class _HTTPServer(ThreadingHTTPServer):
    owner: Server
    daemon_threads = False  # joined when the server closes
    block_on_close = True


@contextlib.contextmanager
def serve() -> Iterator[Server]:
    """Serve on an ephemeral loopback port; on exit close every connection and join threads."""
    httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
    server = Server(httpd)
    httpd.owner = server
    # A short poll interval: shutdown() waits for the serving loop to look (0.5 s by default).
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), name="provider-server")
    thread.start()
    try:
        yield server
    finally:
        server.closing.set()
        httpd.shutdown()
        thread.join(TIMEOUT)
        with server.lock:
            connections = list(server.connections)
            hangs = list(server.hangs)
        for hang in hangs:
            hang.release.set()
        for connection in connections:  # a kept-alive connection waits for its next request
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        while True:  # wake handlers still waiting for a reply
            try:
                reply = server.replies.get_nowait()
            except queue.Empty:
                break
            if isinstance(reply, Hang):
                reply.release.set()
        httpd.server_close()  # joins the request threads


def sse(events: list[tuple[str | None, Any]], **kwargs: Any) -> Stream:
    """Return a :class:`Stream` (a shorthand)."""
    return Stream(events, **kwargs)
