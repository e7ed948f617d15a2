"""Serve the observer beside a program (the demo, a script) with uvicorn on a thread of its own."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from praxo_actors._errors import PraxoError
from praxo_actors.codes import RUNTIME_INVALID_INPUT, RUNTIME_TIMEOUT, SERVE_FAILED
from praxo_actors.observer._app import observer_app

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime

__all__ = ["ObserverServer"]

# Each accepted connection inherits the listening socket's send buffer. Left to autotuning, the
# kernel lets a client that never reads hold ~1.6 MB on loopback (measured), 1.6 GB for a
# thousand such clients; 64 KiB (the kernel doubles it) still far exceeds what the page reads.
_SEND_BUFFER = 64 * 1024
_CUT = "ASGI callable returned without completing response."


class _QuietCuts(logging.Filter):
    """Drop uvicorn's error for a response cut short, from one server's thread only: the app
    cuts a slow event-stream client's response on purpose (and logs and counts it itself)."""

    def __init__(self, thread: threading.Thread) -> None:
        super().__init__()
        self._thread = thread

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.thread == self._thread.ident and record.getMessage() == _CUT)


class ObserverServer:
    """The observer of one runtime, served over HTTP until :meth:`stop`.

    Uvicorn runs on a daemon thread with its own event loop, so the program it watches keeps its
    own; the app reads the runtime only through its thread-safe async forms. ``port=0`` picks a
    free port; :attr:`url` says which. ``client_buffer``, ``show_arguments`` and
    ``allowed_hosts`` are :func:`observer_app`'s; each connection's kernel send buffer is
    capped (64 KiB), so a client that never reads costs a
    bounded amount of memory in the kernel as well as in the process.

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` for a bad port or buffer; ``SERVE_FAILED``
            when the server cannot listen (e.g. the port is taken); ``RUNTIME_TIMEOUT`` when
            it did not start within ``timeout`` seconds.
    """

    def __init__(
        self,
        runtime: Runtime,
        host: str = "127.0.0.1",
        port: int = 0,
        timeout: float = 10.0,
        client_buffer: int = 1000,
        *,
        show_arguments: bool = False,
        allowed_hosts: Iterable[str] | None = None,
    ) -> None:
        import uvicorn

        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise PraxoError(RUNTIME_INVALID_INPUT, f"port must be 0..65535, got {port!r}")
        self._app = observer_app(
            runtime,
            client_buffer=client_buffer,
            show_arguments=show_arguments,
            allowed_hosts=allowed_hosts,
        )
        config = uvicorn.Config(
            self._app,
            host=host,
            port=port,
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._timeout = timeout
        self._failed: list[BaseException] = []
        try:
            self._socket = _listen(host, port)
        except OSError as exc:
            raise PraxoError(
                SERVE_FAILED, f"the observer cannot listen on {host}:{port}: {exc}"
            ) from exc
        self._thread = threading.Thread(target=self._run, name="praxo-observer", daemon=True)
        self._quiet = _QuietCuts(self._thread)
        logging.getLogger("uvicorn.error").addFilter(self._quiet)
        self._thread.start()
        tick = threading.Event()  # never set: a bounded pause between looks
        deadline = time.monotonic() + timeout
        while not self._server.started and self._thread.is_alive():
            if time.monotonic() >= deadline:
                break
            tick.wait(0.01)
        if not self._server.started:
            self.stop()
            raise PraxoError(RUNTIME_TIMEOUT, f"the observer did not start on {host}:{port}") from (
                self._failed[0] if self._failed else None
            )
        self.host = host
        self.port: int = self._socket.getsockname()[1]
        self.url = f"http://{host}:{self.port}/"

    def _run(self) -> None:
        try:
            self._server.run(sockets=[self._socket])
        except BaseException as exc:  # reported by __init__; the thread ends either way
            self._failed.append(exc)

    def stop(self) -> None:
        """End the event streams, stop serving, and wait (bounded) for the server's thread to
        end. Idempotent."""
        self._app.state.streams.end()  # else uvicorn waits on them, then cancels them
        self._server.should_exit = True
        self._thread.join(self._timeout)
        self._socket.close()
        logging.getLogger("uvicorn.error").removeFilter(self._quiet)

    def __enter__(self) -> ObserverServer:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.stop()


def _listen(host: str, port: int) -> socket.socket:
    """Return a socket listening on ``host:port`` whose connections get a capped send buffer."""
    family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _SEND_BUFFER)
        sock.bind(address)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock
