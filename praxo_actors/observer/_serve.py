"""Serve the observer beside a program (the demo, a script) with uvicorn on a thread of its own."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from praxo_actors._errors import PraxoError
from praxo_actors.observer._app import observer_app

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime

__all__ = ["ObserverServer"]


class ObserverServer:
    """The observer of one runtime, served over HTTP until :meth:`stop`.

    Uvicorn runs on a daemon thread with its own event loop, so the program it watches keeps its
    own; the app reads the runtime only through its thread-safe async forms. ``port=0`` picks a
    free port; :attr:`url` says which.

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` for a bad port; ``RUNTIME_TIMEOUT`` when the
            server did not start listening within ``timeout`` seconds (e.g. the port is taken).
    """

    def __init__(
        self, runtime: Runtime, host: str = "127.0.0.1", port: int = 0, timeout: float = 10.0
    ) -> None:
        import uvicorn

        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise PraxoError("RUNTIME_INVALID_INPUT", f"port must be 0..65535, got {port!r}")
        config = uvicorn.Config(
            observer_app(runtime),
            host=host,
            port=port,
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._timeout = timeout
        self._failed: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, name="praxo-observer", daemon=True)
        self._thread.start()
        tick = threading.Event()  # never set: a bounded pause between looks
        deadline = time.monotonic() + timeout
        while not self._server.started and self._thread.is_alive():
            if time.monotonic() >= deadline:
                break
            tick.wait(0.01)
        if not self._server.started:
            self.stop()
            raise PraxoError(
                "RUNTIME_TIMEOUT", f"the observer did not start on {host}:{port}"
            ) from (self._failed[0] if self._failed else None)
        sockets = self._server.servers[0].sockets
        self.host = host
        self.port: int = sockets[0].getsockname()[1]
        self.url = f"http://{host}:{self.port}/"

    def _run(self) -> None:
        try:
            self._server.run()
        except BaseException as exc:  # reported by __init__; the thread ends either way
            self._failed.append(exc)

    def stop(self) -> None:
        """Stop serving and wait (bounded) for the server's thread to end. Idempotent."""
        self._server.should_exit = True
        self._thread.join(self._timeout)

    def __enter__(self) -> ObserverServer:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.stop()
