"""The observer's ASGI app: a page, its JSON state, one session's inspection, and live events.

Routes (relative to where the host mounts the app):

- ``GET /`` — the page (plain HTML and one small script, both served from this package);
- ``GET /api/state`` — ``{"live_sessions", "sessions", "tree", "statistics", "latency_ms"}``;
  query ``state`` and ``limit`` choose the sessions as :meth:`Runtime.sessions` does;
- ``GET /api/sessions/{id}`` — :meth:`Runtime.inspect` of one session;
- ``GET /api/events`` — the event stream as server-sent events (query ``pattern``, default
  ``*``, and ``session_id``); it ends when the runtime stops.

Every handler awaits the runtime's async forms (or a worker thread), so the app may run on the
runtime's own loop (``Runtime.open``) as well as beside it. Bad input is answered with status
400 and ``{"error": {"code", "message"}}``; a stopped runtime with 503.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from importlib import resources
from typing import TYPE_CHECKING, Any

import msgspec

from praxo_actors._errors import PraxoError
from praxo_actors.core import redact_value
from praxo_actors.models import Event
from praxo_actors.observer._latency import Latency
from praxo_actors.observer._tree import describe_tree

try:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
    from starlette.routing import Route
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installed extras
    raise ModuleNotFoundError(
        "praxo_actors.observer needs Starlette: pip install 'praxo-actors[observer]'",
        name=exc.name,
    ) from exc

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime

__all__ = ["observer_app"]

_STATUS = {"RUNTIME_STOPPED": 503, "RUNTIME_TIMEOUT": 504}
_TREE_LIMIT = 100  # children listed per supervisor (the sessions supervisor may have 100,000)


def observer_app(runtime: Runtime, *, redact: bool = True, timeout: float = 5.0) -> Starlette:
    """Return an ASGI app that shows what ``runtime`` is doing; mount it in a host service.

    The app subscribes to the runtime's ``run.*`` events at once to measure run latency (from
    each run's ``run.started`` to its ``run.completed`` or ``run.failed``).

    Args:
        runtime: A started :class:`~praxo_actors.runtime.Runtime`.
        redact: PII-redact the strings in events before they are streamed to the page.
        timeout: Bound on each read of the runtime (inspection, the tree).

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` when ``runtime`` is not a Runtime or
            ``timeout`` is not a positive number; ``RUNTIME_STOPPED`` once it has stopped.
    """
    from praxo_actors.runtime import Runtime

    if not isinstance(runtime, Runtime):
        raise PraxoError("RUNTIME_INVALID_INPUT", "observer_app needs a started Runtime")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise PraxoError("RUNTIME_INVALID_INPUT", "timeout must be a positive number")
    latency = Latency()
    runtime.events.subscribe(latency, pattern="run.*", buffer=10_000)
    page = resources.files(__package__).joinpath("page.html").read_text(encoding="utf-8")
    script = resources.files(__package__).joinpath("observer.js").read_text(encoding="utf-8")

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
            return _error(exc)
        return _json(
            {
                "live_sessions": stats.live_sessions,
                "sessions": sessions,
                "tree": tree,
                "statistics": stats,
                "latency_ms": latency.snapshot(),
            }
        )

    async def inspect(request: Request) -> Response:
        try:
            info = await runtime.ainspect(request.path_params["session_id"], timeout=timeout)
        except PraxoError as exc:
            return _error(exc)
        return _json(info)

    async def events(request: Request) -> Response:
        pattern = request.query_params.get("pattern", "*")
        session_id = request.query_params.get("session_id") or None
        try:
            stream = runtime.events.stream(pattern, session_id, buffer=1000)
        except PraxoError as exc:
            return _error(exc)

        async def body() -> AsyncIterator[bytes]:
            async with stream:
                # A comment first, so the client sees the stream open before any event.
                yield b": praxo-actors observer\n\n"
                async for event in stream:
                    yield _sse(event, redact)
                yield b"event: end\ndata: {}\n\n"

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(body(), media_type="text/event-stream", headers=headers)

    return Starlette(
        routes=[
            Route("/", index),
            Route("/observer.js", observer_js),
            Route("/api/state", state),
            Route("/api/sessions/{session_id:path}", inspect),
            Route("/api/events", events),
        ]
    )


def _session_query(request: Request) -> tuple[str | None, int]:
    wanted = request.query_params.get("state") or None
    text = request.query_params.get("limit", "1000")
    try:
        limit = int(text)
    except ValueError:
        raise PraxoError("RUNTIME_INVALID_INPUT", f"limit must be an int, got {text!r}") from None
    return wanted, limit


_encoder = msgspec.json.Encoder()


def _json(value: Any) -> Response:
    return Response(_encoder.encode(value), media_type="application/json")


def _error(exc: PraxoError) -> Response:
    status = _STATUS.get(exc.code, 400 if "INVALID" in exc.code else 500)
    return JSONResponse({"error": {"code": exc.code, "message": exc.message}}, status_code=status)


def _sse(event: Event, redact: bool) -> bytes:
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
