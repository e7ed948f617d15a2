"""The observer's ASGI app: a page, its JSON state, one session's inspection, and live events.

Routes (relative to where the host mounts the app):

- ``GET /`` — the page (plain HTML and one small script, both served from this package);
- ``GET /api/state`` — ``{"live_sessions", "sessions", "tree", "statistics", "latency_ms",
  "observer"}`` (``"observer"``: the event streams' counters, see ``_streams.StreamStatistics``);
  query ``state`` and ``limit`` choose the sessions as :meth:`Runtime.sessions` does;
- ``GET /api/sessions/{id}`` — :meth:`Runtime.inspect` of one session;
- ``GET /api/events`` — the event stream as server-sent events (query ``pattern``, default
  ``*``, and ``session_id``); it ends when the runtime stops, and a client more than
  ``client_buffer`` events behind is dropped (see :mod:`praxo_actors.observer._streams`).

Every handler awaits the runtime's async forms (or a worker thread), so the app may run on the
runtime's own loop (``Runtime.open``) as well as beside it. Bad input is answered with status
400 and ``{"error": {"code", "message"}}``; a stopped runtime with 503.
"""

from __future__ import annotations

import asyncio
from importlib import resources
from typing import TYPE_CHECKING

from praxo_actors._errors import PraxoError
from praxo_actors.observer._latency import Latency
from praxo_actors.observer._tree import describe_tree

try:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, Response
    from starlette.routing import Route

    from praxo_actors.observer._responses import error_response, json_response
    from praxo_actors.observer._streams import Streams
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installed extras
    raise ModuleNotFoundError(
        "praxo_actors.observer needs Starlette: pip install 'praxo-actors[observer]'",
        name=exc.name,
    ) from exc

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime

__all__ = ["observer_app"]

_TREE_LIMIT = 100  # children listed per supervisor (the sessions supervisor may have 100,000)


def observer_app(
    runtime: Runtime, *, redact: bool = True, timeout: float = 5.0, client_buffer: int = 1000
) -> Starlette:
    """Return an ASGI app that shows what ``runtime`` is doing; mount it in a host service.

    The app subscribes to the runtime's ``run.*`` events at once to measure run latency (from
    each run's ``run.started`` to its ``run.completed`` or ``run.failed``).

    Args:
        runtime: A started :class:`~praxo_actors.runtime.Runtime`.
        redact: PII-redact the strings in events before they are streamed to the page.
        timeout: Bound on each read of the runtime (inspection, the tree).
        client_buffer: Events queued for each ``/api/events`` client; a client that falls
            further behind (past what its socket already holds) is dropped, its stream
            closed, and counted in ``/api/state``'s ``observer.clients_dropped``.

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` when ``runtime`` is not a Runtime,
            ``timeout`` is not a positive number or ``client_buffer`` not an int >= 1;
            ``RUNTIME_STOPPED`` once it has stopped.
    """
    from praxo_actors.runtime import Runtime

    if not isinstance(runtime, Runtime):
        raise PraxoError("RUNTIME_INVALID_INPUT", "observer_app needs a started Runtime")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise PraxoError("RUNTIME_INVALID_INPUT", "timeout must be a positive number")
    if isinstance(client_buffer, bool) or not isinstance(client_buffer, int) or client_buffer < 1:
        raise PraxoError("RUNTIME_INVALID_INPUT", "client_buffer must be an int >= 1")
    latency = Latency()
    runtime.events.subscribe(latency, pattern="run.*", buffer=10_000)
    page = resources.files(__package__).joinpath("page.html").read_text(encoding="utf-8")
    script = resources.files(__package__).joinpath("observer.js").read_text(encoding="utf-8")
    streams = Streams(runtime, redact, client_buffer)

    async def index(_request: Request) -> Response:
        return HTMLResponse(page)

    async def observer_js(_request: Request) -> Response:
        return Response(script, media_type="text/javascript")

    async def state(request: Request) -> Response:
        try:
            wanted, limit = _session_query(request)
            sessions = await runtime.asessions(wanted, limit, timeout=timeout)
            stats = await asyncio.to_thread(runtime.statistics)
            tree = await asyncio.to_thread(describe_tree, runtime.root, _TREE_LIMIT, timeout)
        except PraxoError as exc:
            return error_response(exc)
        return json_response(
            {
                "live_sessions": stats.live_sessions,
                "sessions": sessions,
                "tree": tree,
                "statistics": stats,
                "latency_ms": latency.snapshot(),
                "observer": streams.statistics(),
            }
        )

    async def inspect(request: Request) -> Response:
        try:
            info = await runtime.ainspect(request.path_params["session_id"], timeout=timeout)
        except PraxoError as exc:
            return error_response(exc)
        return json_response(info)

    app = Starlette(
        routes=[
            Route("/", index),
            Route("/observer.js", observer_js),
            Route("/api/state", state),
            Route("/api/sessions/{session_id:path}", inspect),
            Route("/api/events", streams, methods=["GET"]),
        ]
    )
    app.state.streams = streams  # for ObserverServer.stop: end the streams before the server
    return app


def _session_query(request: Request) -> tuple[str | None, int]:
    wanted = request.query_params.get("state") or None
    text = request.query_params.get("limit", "1000")
    try:
        limit = int(text)
    except ValueError:
        raise PraxoError("RUNTIME_INVALID_INPUT", f"limit must be an int, got {text!r}") from None
    return wanted, limit
