"""Serve an ASGI app with uvicorn, ending its event streams first when it shuts down.

An open server-sent-events response is a request in progress: on SIGTERM, plain uvicorn waits
for it through the whole grace period, then cancels it (a ``CancelledError`` traceback per
stream on stderr). :func:`serve` ends the streams as soon as shutdown begins — the observer's
(:class:`praxo_actors.observer.ObserverServer` does the same) and, given ``runtime``, every
``runtime.events.stream(...)`` — so the responses finish and uvicorn exits at once. Needs the
``observer`` extra (uvicorn).
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from praxo_actors._errors import PraxoError
from praxo_actors.codes import RUNTIME_INVALID_INPUT, SERVE_FAILED

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime

__all__ = ["serve"]

_GRACE = 5.0  # seconds uvicorn waits for requests in progress, unless told otherwise


def serve(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    runtime: Runtime | None = None,
    **uvicorn: Any,
) -> None:
    """Serve ``app`` until SIGINT or SIGTERM, then shut down cleanly and return.

    On the signal it stops accepting connections, ends the event streams (the observer
    app's, when ``app`` is one; every ``runtime.events.stream(...)`` of ``runtime``, whose
    iterators then end, so a handler streaming them finishes its response), lets the other
    requests in progress finish within ``timeout_graceful_shutdown`` seconds (default 5),
    and returns — it does not re-raise the signal, so the program goes on (to stop the
    runtime, say) and exits with its own status. The runtime itself is not stopped.

    Args:
        app: An ASGI app, e.g. :func:`praxo_actors.observer.observer_app`'s.
        host: The address to listen on (loopback unless told).
        port: The port (0: any free one).
        runtime: The runtime whose event streams to end first.
        **uvicorn: Further ``uvicorn.Config`` options; ``log_level`` defaults to
            ``"warning"``, so a clean start and stop write nothing to stderr.

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` for a bad port or a ``runtime`` that is not a
            Runtime; ``SERVE_FAILED`` when the server cannot start (the port is in use, the
            address cannot be bound, the app's startup failed), never ``SystemExit``.
        ModuleNotFoundError: uvicorn is not installed (the ``observer`` extra).
    """
    from praxo_actors.runtime import Runtime

    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise PraxoError(RUNTIME_INVALID_INPUT, f"port must be 0..65535, got {port!r}")
    if runtime is not None and not isinstance(runtime, Runtime):
        raise PraxoError(RUNTIME_INVALID_INPUT, "runtime must be a Runtime or None")
    try:
        import uvicorn as _uvicorn
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installed extras
        raise ModuleNotFoundError(
            "praxo_actors.serving needs uvicorn: pip install 'praxo-actors[observer]'",
            name=exc.name,
        ) from exc
    uvicorn.setdefault("log_level", "warning")
    uvicorn.setdefault("timeout_graceful_shutdown", _GRACE)
    config = _uvicorn.Config(app, host=host, port=port, **uvicorn)
    try:
        _server_class(_uvicorn.Server)(config, app, runtime).run()
    except SystemExit as exc:  # uvicorn's way to say it could not start: a port in use, ...
        raise PraxoError(
            SERVE_FAILED,
            f"could not serve on {host}:{port} (uvicorn exited with status {exc.code}; "
            "its log says why: the port in use, an address it cannot bind, a failed startup)",
        ) from None


def _server_class(base: type[Any]) -> type[Any]:
    """Return uvicorn's ``Server`` with the shutdown :func:`serve` needs (checked on 0.54)."""

    class Server(base):  # type: ignore[misc]
        def __init__(self, config: Any, app: Any, runtime: Runtime | None) -> None:
            super().__init__(config)
            self._app = app
            self._runtime = runtime

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # Listeners first, so no new stream begins once the open ones are ended;
            # uvicorn's own shutdown closes them again (a no-op) and waits for the requests.
            for server in self.servers:
                server.close()
            _end_streams(self._app, self._runtime)
            await super().shutdown(sockets)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn's own re-raises the signal once it has shut down, which kills the
            # process (status -15); serve() returns instead.
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            signals = (signal.SIGINT, signal.SIGTERM)
            before = {sig: signal.signal(sig, self.handle_exit) for sig in signals}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)

    return Server


def _end_streams(app: Any, runtime: Runtime | None) -> None:
    """End the observer app's event streams and, given ``runtime``, its ``events.stream``s.

    A stream's subscription carries an ``on_close`` hook (an ``EventStream``'s, or the
    observer's fan-out's) that ends it; unsubscribing runs the hook. Other subscriptions (a
    plain callable's) are left alone.
    """
    streams = getattr(getattr(app, "state", None), "streams", None)
    end = getattr(streams, "end", None)
    if callable(end):
        end()  # the observer's own way, as ObserverServer.stop does
    if runtime is None:
        return
    for subscription in runtime.events.subscriptions:
        if subscription.on_close is not None:
            subscription.unsubscribe()
